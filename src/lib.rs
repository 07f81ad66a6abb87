//! perflab: a performance lab in one binary.
//!
//! The pipeline, one module per stage:
//! `plan` (parse, validate, expand) → `runner` (phases, repetitions, the system under test) →
//! `monitor` (samplers) and `workload` (http, built-ins, exec + tool adapters) → `store` (SQLite) →
//! `analysis` (statistics, comparison, scaling, bottlenecks) → `report` (terminal, Markdown, HTML, SVG).
//! `serve` is the built-in target; `probe` measures latency with small probes (icmp, tcp, http, udp,
//! command); `cli` maps subcommands onto the library; `live` is the run's event feed, which live views read.

#![warn(clippy::undocumented_unsafe_blocks)]
// No function over 150 lines (the threshold is in clippy.toml); CI runs clippy with -D warnings.
#![warn(clippy::too_many_lines)]

pub mod agent;
pub mod analysis;
pub mod cli;
pub mod dist;
pub mod error;
pub mod live;
pub mod model;
pub mod monitor;
pub mod plan;
pub mod probe;
pub mod profile;
pub mod remote;
pub mod report;
pub mod runner;
pub mod serve;
pub mod store;
pub mod util;
pub mod workload;
