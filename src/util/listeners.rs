//! The TCP sockets of this network namespace that listen (`/proc/net/tcp` and `/proc/net/tcp6`,
//! state `0A`): their local address and socket inode. A client's connection, whatever its local
//! port, is not one of them.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// A listening TCP socket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listener {
    pub addr: SocketAddr,
    /// The socket's inode (`socket:[N]` among a process's descriptors).
    pub inode: u64,
}

/// Every listening TCP socket (IPv4 and IPv6); none when /proc cannot be read.
pub fn all() -> Vec<Listener> {
    let mut out = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        if let Ok(text) = std::fs::read_to_string(table) {
            out.extend(parse(&text));
        }
    }
    out
}

/// The listening sockets of one table's text.
pub fn parse(text: &str) -> Vec<Listener> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            // sl local_address rem_address st ... inode (the 10th field)
            if f.len() < 10 || f[3] != "0A" {
                return None;
            }
            let (ip, port) = f[1].split_once(':')?;
            Some(Listener {
                addr: SocketAddr::new(ip_of(ip)?, u16::from_str_radix(port, 16).ok()?),
                inode: f[9].parse().ok()?,
            })
        })
        .collect()
}

/// The kernel prints an address as 32-bit words in hex, each in this machine's byte order.
fn ip_of(hex: &str) -> Option<IpAddr> {
    let words: Option<Vec<[u8; 4]>> = (0..hex.len() / 8)
        .map(|i| u32::from_str_radix(hex.get(i * 8..i * 8 + 8)?, 16).ok().map(u32::to_ne_bytes))
        .collect();
    let bytes: Vec<u8> = words?.concat();
    match bytes.len() {
        4 => Some(IpAddr::V4(Ipv4Addr::new(bytes[0], bytes[1], bytes[2], bytes[3]))),
        16 => Some(IpAddr::V6(Ipv6Addr::from(<[u8; 16]>::try_from(bytes).ok()?))),
        _ => None,
    }
}

/// Whether a socket listening at `l` takes the connections meant for `want`: the same address,
/// or a wildcard (`0.0.0.0`, `::`) on the same port.
pub fn answers_for(l: &SocketAddr, want: &SocketAddr) -> bool {
    l.port() == want.port() && (l.ip() == want.ip() || l.ip().is_unspecified())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listening_sockets_only() {
        let ip = |a: Ipv4Addr| format!("{:08X}", u32::from_ne_bytes(a.octets()));
        let lo = ip(Ipv4Addr::LOCALHOST);
        let any = ip(Ipv4Addr::UNSPECIFIED);
        let text = format!(
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
             0: {lo}:1F90 {any}:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0 100 0 0 10 0\n\
             1: {lo}:9C40 {lo}:1F90 01 00000000:00000000 00:00000000 00000000     0        0 222 1 0 20 4 30 10 -1\n"
        );
        let got = parse(&text);
        assert_eq!(
            got,
            vec![Listener {
                addr: "127.0.0.1:8080".parse().expect("addr"),
                inode: 111
            }],
            "the established connection from port 40000 is left out"
        );
        let v6 = "  sl  local_address                         remote_address                        st\n\
                  0: 00000000000000000000000001000000:0050 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 333 1\n";
        let got = parse(v6);
        assert_eq!(got.len(), 1);
        if cfg!(target_endian = "little") {
            assert_eq!(got[0].addr, "[::1]:80".parse().expect("addr"));
        }
        let want: SocketAddr = "127.0.0.1:80".parse().expect("addr");
        assert!(answers_for(&"0.0.0.0:80".parse().expect("addr"), &want));
        assert!(answers_for(&"[::]:80".parse().expect("addr"), &want));
        assert!(!answers_for(&"127.0.0.2:80".parse().expect("addr"), &want));
        assert!(!answers_for(&"127.0.0.1:81".parse().expect("addr"), &want));
    }
}
