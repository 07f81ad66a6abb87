//! The last bytes of an output stream: a child's stdout or stderr is kept up to a limit, and when it
//! grows past it the oldest bytes go (tools and servers print what matters last).

/// The last `limit` bytes pushed, and whether anything older was dropped.
#[derive(Clone, Debug)]
pub struct Tail {
    bytes: Vec<u8>,
    limit: usize,
    truncated: bool,
}

impl Tail {
    /// An empty tail that keeps at most `limit` bytes.
    pub fn new(limit: usize) -> Tail {
        Tail {
            bytes: Vec::new(),
            limit,
            truncated: false,
        }
    }

    /// Append `data`, dropping the oldest bytes beyond the limit.
    pub fn push(&mut self, data: &[u8]) {
        self.bytes.extend_from_slice(data);
        if self.bytes.len() > self.limit {
            let cut = self.bytes.len() - self.limit;
            self.bytes.drain(..cut);
            self.truncated = true;
        }
    }

    /// What is kept, as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }

    /// Whether bytes were dropped from the head.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// Take what is kept as text, leaving the tail empty; with whether bytes were dropped.
    pub fn take_text(&mut self) -> (String, bool) {
        let bytes = std::mem::take(&mut self.bytes);
        (String::from_utf8_lossy(&bytes).into_owned(), self.truncated)
    }
}

#[cfg(test)]
mod tests {
    use super::Tail;

    #[test]
    fn keeps_the_last_bytes_and_says_when_it_dropped_some() {
        let mut t = Tail::new(5);
        t.push(b"abc");
        assert_eq!((t.text(), t.truncated()), ("abc".to_string(), false));
        t.push(b"defg");
        assert_eq!((t.text(), t.truncated()), ("cdefg".to_string(), true));
        assert_eq!(t.take_text(), ("cdefg".to_string(), true));
        assert_eq!(t.text(), "");
    }

    #[test]
    fn exactly_the_limit_is_not_truncated() {
        let mut t = Tail::new(4);
        t.push(b"ab");
        t.push(b"cd");
        assert_eq!((t.text(), t.truncated()), ("abcd".to_string(), false));
    }
}
