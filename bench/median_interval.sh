# Sourced by the benchmarks that run alternating rounds: the median of the rounds' figures and a
# distribution-free interval for it. The k-th smallest and k-th largest of n rounds hold the median
# with probability 1 - 2 P(Binomial(n, 1/2) < k); k is the largest with that probability >= 90 %
# (the whole range for 5 rounds, 94 %; the second smallest to the second largest for 9, 96 %).
#   interval   stdin: one figure per line; prints "median low high confidence_%"
interval() {
    sort -g | awk '{ a[NR] = $1 } END {
        n = NR; med = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        k = 1; conf = 1 - 2 * 0.5 ^ n
        for (j = 2; j <= n / 2; j++) {
            c = 0; b = 1
            for (i = 0; i < j; i++) { c += b; b = b * (n - i) / (i + 1) }
            p = 1 - 2 * c * 0.5 ^ n
            if (p < 0.9) break
            k = j; conf = p
        }
        printf "%.4f %.4f %.4f %.0f\n", med, a[k], a[n + 1 - k], 100 * conf }'
}
