fn main() {
    std::process::exit(perflab::cli::main());
}
