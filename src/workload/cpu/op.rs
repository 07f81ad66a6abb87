//! One `cpu` worker's operation: one unit of its method's work per call; between calls its [`Duty`]
//! cycle sleeps off whatever CPU time it used beyond its load, and it samples its own load every
//! second of the load phase.

use super::config::Prepared;
use super::duty::Duty;
use super::methods::{Choice, Scratch, ALL};
use crate::workload::driver::clock::thread_cpu;
use crate::workload::driver::ops::Operation;
use std::time::{Duration, Instant};

/// One worker's operation and what it measured of itself.
pub struct CpuOp {
    method: Choice,
    scratch: Scratch,
    duty: Duty,
    n: u64,
    /// The thread's CPU time after the last operation.
    cpu: Duration,
    /// The load phase: its start (wall, CPU) once it has begun, and the last reading.
    measured_from: Option<(Instant, Duration)>,
    last: (Instant, Duration),
    /// Per method (in `ALL` order): measured operations and their CPU time.
    pub per_method: [(u64, Duration); ALL.len()],
    /// This worker's load (fraction of its CPU) in each whole second of the load phase.
    pub seconds: Vec<f64>,
    second_start: (Instant, Duration),
}

impl CpuOp {
    pub fn new(p: &Prepared, id: usize) -> CpuOp {
        let (now, cpu) = (Instant::now(), thread_cpu());
        CpuOp {
            method: p.method,
            scratch: Scratch::new(id as u64 + 1),
            duty: Duty::new(p.load_pct / 100.0, now, cpu),
            n: 0,
            cpu,
            measured_from: None,
            last: (now, cpu),
            per_method: [(0, Duration::ZERO); ALL.len()],
            seconds: Vec::new(),
            second_start: (now, cpu),
        }
    }

    /// This worker's load over the load phase (CPU time / wall time), if it began.
    pub fn achieved(&self) -> Option<f64> {
        let (t0, c0) = self.measured_from?;
        let wall = self.last.0.saturating_duration_since(t0).as_secs_f64();
        (wall > 0.0).then(|| self.last.1.saturating_sub(c0).as_secs_f64() / wall)
    }

    /// CPU time used in the load phase.
    pub fn measured_cpu(&self) -> Duration {
        self.measured_from.map(|(_, c0)| self.last.1.saturating_sub(c0)).unwrap_or_default()
    }

    fn observe(&mut self, now: Instant, measured: bool) {
        let cpu = thread_cpu();
        self.last = (now, cpu);
        if !measured {
            return;
        }
        if self.measured_from.is_none() {
            self.measured_from = Some((now, cpu));
            self.second_start = (now, cpu);
            return;
        }
        let (t0, c0) = self.second_start;
        let wall = now.saturating_duration_since(t0);
        if wall >= Duration::from_secs(1) {
            self.seconds.push(cpu.saturating_sub(c0).as_secs_f64() / wall.as_secs_f64());
            self.second_start = (now, cpu);
        }
    }
}

impl Operation for CpuOp {
    fn call(&mut self) -> Result<(), String> {
        let m = self.method.nth(self.n);
        self.n += 1;
        let before = self.cpu;
        self.scratch.run(m);
        self.cpu = thread_cpu();
        if self.measured_from.is_some() {
            let e = &mut self.per_method[m.index()];
            e.0 += 1;
            e.1 += self.cpu.saturating_sub(before);
        }
        Ok(())
    }

    fn between(&mut self, now: Instant, measured: bool) {
        let pause = self.duty.pause(now, self.cpu);
        if !pause.is_zero() {
            std::thread::sleep(pause);
        }
        self.observe(Instant::now(), measured);
        self.cpu = self.last.1;
    }
}
