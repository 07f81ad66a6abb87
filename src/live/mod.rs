//! Watching a run live: the runner publishes typed [`Event`]s (docs/live.md) through a [`Feed`],
//! which appends them to the run's store as they happen, so that a view started late or from
//! another terminal reads the run from its start.

pub mod event;
pub mod exporter;
pub mod feed;
pub mod metrics;
pub mod server;
pub mod tui;
pub mod watch;

pub use event::{Event, Figure, HostNow, PlannedPoint, PlannedTrial, ProbeNow};
pub use feed::{Feed, LatestSample, Publisher};
