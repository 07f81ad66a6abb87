//! The result model at the bottom of the crate: what a trial measured and how it went, in the types
//! every stage above shares (`workload` produces them, `runner` fills a trial with them, `store`
//! keeps them, `analysis` and `report` read them). It uses nothing of the crate's stages.
//!
//! - metrics with their kind, unit and direction ([`Metric`], [`MetricKind`], [`Better`]), latency
//!   histograms ([`NamedHistogram`]), per-second series ([`SeriesPoint`]) and what one workload run
//!   produced ([`WorkloadResult`]);
//! - a workload's headline figures ([`Primary`], declared; [`PrimaryMetrics`], resolved and stored);
//! - the phases of a trial ([`Phase`]) and when each ran ([`PhaseSpan`]);
//! - why a trial failed ([`TrialFailure`]) and the rest of a trial's record ([`TrialInfo`]);
//! - profiles of the system under test ([`Profile`]: folded stacks, on- or off-CPU);
//! - which machine measured ([`LOCAL_HOST`], [`HostIdentity`]);
//! - what a run skipped, as its notes say it ([`skip`]).

pub mod failure;
pub mod figures;
pub mod host;
pub mod phase;
pub mod primary;
pub mod profile;
pub mod result;
pub mod segment;
pub mod skip;
pub mod trial;

pub use failure::TrialFailure;
pub use host::{HostIdentity, LOCAL_HOST};
pub use phase::{Phase, PhaseSpan};
pub use primary::{Primary, PrimaryMetrics};
pub use profile::{FoldedStack, Profile, ProfileKind};
pub use result::{latency_histogram, Better, Metric, MetricKind, NamedHistogram, SeriesPoint, WorkloadResult};
pub use segment::Segment;
pub use trial::TrialInfo;
