//! The two blocking models: a fixed pool of workers sharing one accept queue, and a thread per
//! connection. Shutdown wakes blocked `accept`s with connections to ourselves.

use super::http1::serve_connection;
use super::Shared;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

type Stopper = Box<dyn FnOnce() + Send>;

fn wake(addr: SocketAddr, n: usize) {
    for _ in 0..n {
        let _ = TcpStream::connect_timeout(&addr, std::time::Duration::from_millis(200));
    }
}

fn local(addr: SocketAddr) -> SocketAddr {
    if addr.ip().is_unspecified() {
        SocketAddr::from(([127, 0, 0, 1], addr.port()))
    } else {
        addr
    }
}

/// N workers, each accepting and serving one connection at a time.
pub fn start_pool(listener: TcpListener, shared: Arc<Shared>, workers: usize) -> anyhow::Result<Stopper> {
    let addr = local(listener.local_addr()?);
    let listener = Arc::new(listener);
    let mut handles: Vec<JoinHandle<()>> = Vec::new();
    for i in 0..workers {
        let (l, s) = (listener.clone(), shared.clone());
        handles.push(std::thread::Builder::new().name(format!("serve-pool-{i}")).spawn(move || {
            while !s.stop.load(Ordering::Relaxed) {
                match l.accept() {
                    Ok((stream, _)) if !s.stop.load(Ordering::Relaxed) => serve_connection(stream, &s),
                    Ok(_) => break,
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(5)),
                }
            }
        })?);
    }
    Ok(Box::new(move || {
        wake(addr, workers);
        handles.into_iter().for_each(|h| {
            let _ = h.join();
        });
    }))
}

/// One acceptor; a new thread for each connection.
pub fn start_per_connection(listener: TcpListener, shared: Arc<Shared>) -> anyhow::Result<Stopper> {
    let addr = local(listener.local_addr()?);
    let conns: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::new(Mutex::new(Vec::new()));
    let c2 = conns.clone();
    let s = shared.clone();
    let acceptor = std::thread::Builder::new().name("serve-accept".into()).spawn(move || {
        while !s.stop.load(Ordering::Relaxed) {
            match listener.accept() {
                Ok((stream, _)) if !s.stop.load(Ordering::Relaxed) => {
                    let s2 = s.clone();
                    if let Ok(h) = std::thread::Builder::new()
                        .name("serve-conn".into())
                        .spawn(move || serve_connection(stream, &s2))
                    {
                        if let Ok(mut v) = c2.lock() {
                            v.retain(|h| !h.is_finished());
                            v.push(h);
                        }
                    }
                }
                Ok(_) => break,
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(5)),
            }
        }
    })?;
    Ok(Box::new(move || {
        wake(addr, 1);
        let _ = acceptor.join();
        let handles = conns.lock().map(|mut v| std::mem::take(&mut *v)).unwrap_or_default();
        handles.into_iter().for_each(|h| {
            let _ = h.join();
        });
    }))
}
