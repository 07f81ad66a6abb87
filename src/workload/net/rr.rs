//! `mode = "rr"` and `"crr"` (netperf's TCP_RR and TCP_CRR): one operation of the load driver is one
//! round trip of `size` bytes each way, on a connection kept for the run (rr) or on a new connection
//! made and closed for each (crr, the connect and close inside the timed operation). The driver
//! times every round trip into merged HDR histograms. After an error the worker stops (the server
//! is gone or broke the protocol) and the error is kept with its class.

use super::config::{NetMode, Prepared};
use super::sock::{self, NetError};
use crate::util::cut::Watched;
use crate::util::netwire::{Header, Mode};
use crate::workload::driver::ops::Operation;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;

pub struct RrOp {
    p: Prepared,
    conn: Option<Watched<TcpStream>>,
    buf: Vec<u8>,
    /// Connections made.
    pub connections: u64,
    pub errors: BTreeMap<&'static str, u64>,
    pub error: Option<NetError>,
}

impl RrOp {
    pub fn new(p: &Prepared) -> RrOp {
        let mut op = RrOp {
            p: p.clone(),
            conn: None,
            buf: vec![0x77; p.size],
            connections: 0,
            errors: BTreeMap::new(),
            error: None,
        };
        if p.mode == NetMode::Rr {
            match op.connect() {
                Ok(c) => op.conn = Some(c),
                Err(e) => op.fail(e),
            }
        }
        op
    }

    fn header(&self) -> Header {
        Header {
            mode: Mode::RoundTrip,
            size: self.p.size as u32,
            buffer: self.p.buffer.unwrap_or(0),
            limit: 0,
        }
    }

    fn connect(&mut self) -> Result<Watched<TcpStream>, NetError> {
        let c = sock::connect(self.p.target, &self.header())?;
        let _ = c.set_read_timeout(Some(sock::TIMEOUT));
        self.connections += 1;
        Ok(c)
    }

    fn fail(&mut self, e: NetError) {
        *self.errors.entry(e.class.name()).or_default() += 1;
        self.error.get_or_insert(e);
        self.conn = None;
    }

    fn round_trip(c: &mut Watched<TcpStream>, buf: &mut [u8]) -> Result<(), NetError> {
        c.write_all(buf).map_err(|e| NetError::io(&e, false, "sending the request"))?;
        c.read_exact(buf).map_err(|e| NetError::io(&e, false, "reading the response"))
    }
}

impl Operation for RrOp {
    fn call(&mut self) -> Result<(), String> {
        if self.error.is_some() {
            return Err("stopped after an error".into());
        }
        let mut c = match self.conn.take() {
            Some(c) => c,
            None => self.connect().map_err(|e| {
                let l = e.line();
                self.fail(e);
                l
            })?,
        };
        match Self::round_trip(&mut c, &mut self.buf) {
            Ok(()) => {
                if self.p.mode == NetMode::Rr {
                    self.conn = Some(c);
                }
                Ok(())
            }
            Err(e) => {
                let l = e.line();
                self.fail(e);
                Err(l)
            }
        }
    }

    fn idle(&self) -> bool {
        self.error.is_some()
    }
}
