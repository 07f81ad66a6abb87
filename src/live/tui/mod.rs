//! The terminal view (`perflab run --tui`, `perflab watch RUN_DIR --tui`): the run's events, read
//! from its store as the live page reads them, folded into a [`Board`] and drawn at most four times
//! a second ([`draw`]).
//!
//! The view runs on its own thread and owns the terminal (raw mode, the alternate screen). The
//! terminal is restored on every way out: the view's end ([`View`] dropped: the run ended, or
//! returned an error through `?`), a panic anywhere (ratatui's hook), SIGTERM (the run stops as on
//! Ctrl-C, then the view ends). A terminal that goes away (SIGHUP, an error reading or drawing)
//! stops the run as Ctrl-C does, and the view ends: it never spins.

pub mod board;
pub mod draw;
mod stderr;

use crate::util::Cancel;
use board::Board;
use draw::Ui;
use ratatui::crossterm::event::{self, Event as TermEvent, KeyCode, KeyEventKind, KeyModifiers};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One frame at most this often.
const FRAME: Duration = Duration::from_millis(250);

/// Terminal events taken per frame at most (a terminal that floods, or a broken one that always
/// says it has one, cannot make the view spin).
const MAX_INPUT_PER_FRAME: usize = 64;

/// What `q` and Ctrl-C do.
#[derive(Clone, Debug)]
pub enum Quit {
    /// What Ctrl-C does to `perflab run`: SIGINT to this process (the run stops, its finished
    /// trials stored, exit 130; again, it hurries the cleanup).
    Interrupt,
    /// Set this flag (`perflab watch`: the view ends).
    Cancel(Cancel),
}

impl Quit {
    fn quit(&self) {
        match self {
            // SAFETY: kill(2) on our own pid with a valid signal number has no memory effects; the
            // handler `perflab run` installed (Cancel::on_signals_hurrying) takes it.
            Quit::Interrupt => unsafe {
                libc::kill(libc::getpid(), libc::SIGINT);
            },
            Quit::Cancel(c) => c.cancel(),
        }
    }
}

/// `--tui` needs stdout to be a terminal: the one line saying why not.
pub fn check_terminal() -> anyhow::Result<()> {
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() {
        Ok(())
    } else {
        Err(crate::error::usage(
            "--tui needs a terminal and stdout is not one (leave --tui out: the plain progress is for logs and pipes)",
        ))
    }
}

/// The view on its thread: ends (and restores the terminal) when dropped.
pub struct View {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl View {
    /// Show run directory `dir`'s events in the terminal until dropped; `q`/Ctrl-C do `quit`, `p`
    /// sets and clears `hold` (the run's: its next trial waits while set; none for a watched run).
    pub fn start(dir: &Path, quit: Quit, hold: Option<Arc<AtomicBool>>) -> anyhow::Result<View> {
        let stop = Arc::new(AtomicBool::new(false));
        // A hung-up terminal: SIGHUP no longer ends perflab at once (the run would leave its
        // targets running); the view sees it and stops the run as Ctrl-C does.
        let hup = Arc::new(AtomicBool::new(false));
        let hup_before = stderr::sighup_disposition();
        let hup_id = signal_hook::flag::register(signal_hook::consts::SIGHUP, hup.clone())?;
        let terminal = ratatui::try_init().map_err(|e| {
            restore();
            anyhow::anyhow!("--tui: cannot take the terminal: {e}")
        })?;
        // What is written on stderr meanwhile (a warning) would be drawn over the view and lost
        // with its screen: it is shown in the view, and written out once the view ends.
        let captured = stderr::Capture::start();
        let (dir, flag) = (dir.to_path_buf(), stop.clone());
        let thread = std::thread::Builder::new().name("perflab-tui".into()).spawn(move || {
            let mut terminal = terminal;
            let lines = captured.as_ref().map(stderr::Capture::lines);
            let lost = show(&mut terminal, &dir, &quit, hold.as_deref(), lines.as_ref(), &flag, &hup);
            let kept = captured.map(stderr::Capture::stop).unwrap_or_default();
            if lost.is_some() {
                // Dropping the terminal prints when it cannot show the cursor again: on the lost
                // terminal that print would fail, and a failed print is a panic. Everything
                // printed from now on goes nowhere instead (the run's summary too).
                to_dev_null();
            }
            drop(terminal);
            restore();
            signal_hook::low_level::unregister(hup_id);
            {
                use std::io::Write;
                let mut err = std::io::stderr().lock();
                for l in &kept {
                    let _ = writeln!(err, "{l}");
                }
            }
            if lost.is_none() {
                // The view is over: a hang-up does again what it did before it (a lost terminal
                // keeps it caught: the run is stopping and must not be cut short).
                stderr::restore_sighup(hup_before);
            }
            if let Some(why) = lost {
                use std::io::Write;
                // Said where it can be read (stderr redirected to a file).
                let _ = writeln!(
                    std::io::stderr(),
                    "perflab: the terminal is gone ({why}): stopping the run as Ctrl-C does"
                );
                quit.quit();
            }
        })?;
        Ok(View {
            stop,
            thread: Some(thread),
        })
    }

    /// Whether the view ended by itself (its terminal is gone).
    pub fn ended(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }
}

impl Drop for View {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            if t.join().is_err() {
                // The view panicked: ratatui's hook restored the terminal; once more does no harm.
                restore();
            }
        }
    }
}

/// Standard output and error, where they are a terminal (a character device: not a file or a
/// pipe the user redirected them to), pointed at /dev/null: a terminal that is gone takes no more
/// text, and `isatty` may no longer say what it was.
fn to_dev_null() {
    use std::os::fd::AsRawFd;
    let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") else {
        return;
    };
    for fd in [libc::STDOUT_FILENO, libc::STDERR_FILENO] {
        // SAFETY: fstat writes into the zeroed stat buffer we own, for a descriptor number; dup2
        // takes two descriptors (`null` is open for the call's length) and touches no memory.
        unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            if libc::fstat(fd, &mut st) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFCHR {
                libc::dup2(null.as_raw_fd(), fd);
            }
        }
    }
}

/// Raw mode off, the main screen back, the cursor shown (each harmless when already so).
fn restore() {
    let _ = ratatui::try_restore();
    let _ = ratatui::crossterm::execute!(std::io::stdout(), ratatui::crossterm::cursor::Show);
}

/// The view's loop: read the new events, draw, take the keys until the next frame. Returns why the
/// terminal was lost, if it was.
fn show(
    terminal: &mut ratatui::DefaultTerminal,
    dir: &Path,
    quit: &Quit,
    hold: Option<&AtomicBool>,
    warnings: Option<&stderr::Lines>,
    stop: &AtomicBool,
    hup: &AtomicBool,
) -> Option<String> {
    let mut feed = Reader::new(dir);
    let mut board = Board::default();
    let mut ui = Ui::default();
    // The keys are read by us (`read_keys`), after poll(2) says the terminal has input. Without
    // `/dev/tty`, crossterm is asked, and only then: crossterm 0.29 reads a hung-up terminal in an
    // endless loop (each read gives 0 bytes).
    let tty = std::fs::File::open("/dev/tty").ok();
    while !stop.load(Ordering::SeqCst) {
        if hup.load(Ordering::SeqCst) {
            return Some("hang-up".into());
        }
        let frame_end = Instant::now() + FRAME;
        feed.read_into(&mut board);
        if let Some(w) = warnings.and_then(stderr::Lines::news) {
            ui.message = Some(w);
        }
        ui.now_unix_s = crate::util::time::unix_now();
        if let Err(e) = terminal.draw(|f| draw::draw(f, &board, &ui)) {
            return Some(format!("cannot draw: {e}"));
        }
        for _ in 0..MAX_INPUT_PER_FRAME {
            let left = frame_end.saturating_duration_since(Instant::now());
            if left.is_zero() || stop.load(Ordering::SeqCst) {
                break;
            }
            match input(tty.as_ref(), left.min(Duration::from_millis(50))) {
                Input::None => continue,
                Input::HungUp => return Some("hang-up".into()),
                Input::Ready => {}
            }
            let taken = match &tty {
                Some(t) => read_keys(t, quit, hold, &mut ui),
                None => take_events(quit, hold, &mut ui),
            };
            if let Err(e) = taken {
                return Some(e);
            }
        }
        std::thread::sleep(frame_end.saturating_duration_since(Instant::now()));
    }
    None
}

/// The keys the terminal sent, read from `/dev/tty` and acted on. In raw mode a key is a byte (Ctrl-C
/// is 3); an escape sequence (an arrow, a function key, Alt with a key) is no key of ours, and is
/// skipped. Read here rather than through crossterm's events: crossterm answers a resize from a
/// batch of readiness events that also held the terminal's, and drops that one (its poll is
/// edge-triggered), so a key pressed after a resize would wait for the next key. `Err` when the
/// terminal hung up (a read of 0 bytes) or cannot be read.
fn read_keys(tty: &std::fs::File, quit: &Quit, hold: Option<&AtomicBool>, ui: &mut Ui) -> Result<(), String> {
    use std::io::Read;
    let mut buf = [0u8; 256];
    let n = match (&*tty).read(&mut buf) {
        Ok(0) => return Err("hang-up".into()),
        Ok(n) => n,
        Err(e) if matches!(e.kind(), std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock) => 0,
        Err(e) => return Err(format!("cannot read it: {e}")),
    };
    let keys = &buf[..n];
    let mut i = 0;
    while i < n {
        if keys[i] == 0x1b {
            // ESC [ parameters and a final byte (0x40 to 0x7e); ESC and one byte (ESC O P, Alt+x).
            i += 1;
            if keys.get(i) == Some(&b'[') {
                i += 1;
                while i < n && !(0x40..=0x7e).contains(&keys[i]) {
                    i += 1;
                }
            }
        } else {
            press(char::from(keys[i]), quit, hold, ui);
        }
        i += 1;
    }
    Ok(())
}

/// Without `/dev/tty`: every event crossterm has ready (at most [`MAX_INPUT_PER_FRAME`]), the keys
/// acted on. Why the terminal cannot be read, if it cannot.
fn take_events(quit: &Quit, hold: Option<&AtomicBool>, ui: &mut Ui) -> Result<(), String> {
    for _ in 0..MAX_INPUT_PER_FRAME {
        match event::poll(Duration::ZERO) {
            Ok(false) => return Ok(()),
            Ok(true) => {}
            Err(e) => return Err(format!("cannot read it: {e}")),
        }
        match event::read() {
            Ok(TermEvent::Key(k)) if k.kind != KeyEventKind::Release => match k.code {
                KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => press('\u{3}', quit, hold, ui),
                KeyCode::Char(c) => press(c, quit, hold, ui),
                _ => {}
            },
            Ok(_) => {}
            Err(e) => return Err(format!("cannot read it: {e}")),
        }
    }
    Ok(())
}

/// What a key does: `q` and Ctrl-C (`\u{3}`) stop, `+`/`-` change the window, `p` holds.
fn press(key: char, quit: &Quit, hold: Option<&AtomicBool>, ui: &mut Ui) {
    match key {
        'q' | '\u{3}' => press_quit(quit, ui),
        '+' => ui.widen(true),
        '-' => ui.widen(false),
        'p' => press_hold(hold, ui),
        _ => {}
    }
}

enum Input {
    None,
    Ready,
    HungUp,
}

/// Whether the terminal has input within `wait`, or has hung up (poll(2) on `/dev/tty`; without
/// it, crossterm's own poll).
fn input(tty: Option<&std::fs::File>, wait: Duration) -> Input {
    use std::os::fd::AsRawFd;
    let Some(tty) = tty else {
        return match event::poll(wait) {
            Ok(true) => Input::Ready,
            Ok(false) => Input::None,
            Err(_) => Input::HungUp,
        };
    };
    let mut fds = [libc::pollfd {
        fd: tty.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    }];
    // SAFETY: `fds` is a local array of exactly one initialised pollfd (the count passed), alive for
    // the whole call; poll(2) writes only its `revents`. The fd belongs to `tty`, open meanwhile.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), 1, wait.as_millis().min(1000) as i32) };
    let r = fds[0].revents;
    if n < 0 {
        Input::None
    } else if r & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
        Input::HungUp
    } else if r & libc::POLLIN != 0 {
        Input::Ready
    } else {
        Input::None
    }
}

/// `p`: hold the run's next trial, or release it.
fn press_hold(hold: Option<&AtomicBool>, ui: &mut Ui) {
    ui.message = Some(match hold {
        None => "a watched run is held from the terminal that runs it".into(),
        Some(h) => {
            let held = !h.fetch_xor(true, Ordering::SeqCst);
            if held {
                "held: the next trial waits (p releases it)".into()
            } else {
                "released".into()
            }
        }
    });
}

fn press_quit(quit: &Quit, ui: &mut Ui) {
    if matches!(quit, Quit::Interrupt) {
        ui.message = Some("stopping: the finished trials are kept (q again skips the grace periods)".into());
    }
    quit.quit();
}

/// The run's event log, read from where the last read ended.
struct Reader {
    dir: PathBuf,
    conn: Option<rusqlite::Connection>,
    after: i64,
}

impl Reader {
    fn new(dir: &Path) -> Reader {
        Reader {
            dir: dir.to_path_buf(),
            conn: None,
            after: 0,
        }
    }

    /// Fold every event stored since the last read into `board` (a store that cannot be read now
    /// is tried again at the next frame).
    fn read_into(&mut self, board: &mut Board) {
        if self.conn.is_none() {
            let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
            self.conn = rusqlite::Connection::open_with_flags(self.dir.join(crate::store::DB_FILE), flags)
                .and_then(|c| c.busy_timeout(Duration::from_millis(200)).map(|()| c))
                .ok();
        }
        let Some(conn) = &self.conn else { return };
        loop {
            let Ok(rows) = crate::store::events::read_after(conn, self.after, 1000) else {
                return;
            };
            for r in &rows {
                if let Ok(e) = crate::live::Event::from_stored(&r.kind, r.trial, &r.body) {
                    board.apply(e, r.unix_s);
                }
                self.after = r.seq;
            }
            if rows.len() < 1000 {
                return;
            }
        }
    }
}
