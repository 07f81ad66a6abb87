//! The integration tests, one binary (as ripgrep keeps them): one module per area of perflab.
//! Run one area with `cargo test --release --test it <module>::`, e.g. `--test it monitor_truth::`.

#![warn(clippy::undocumented_unsafe_blocks)]
// No function over 150 lines here either (clippy.toml's threshold).
#![warn(clippy::too_many_lines)]

mod adapters_bench;
#[allow(dead_code)]
mod adapters_common;
mod adapters_corrupt;
mod adapters_registry;
mod adapters_system;
mod addresses;
mod analysis_bottleneck;
mod analysis_compare;
mod analysis_scaling_phases;
mod analysis_stats;
mod architecture;
mod cli_contract;
mod cli_packaging;
#[allow(dead_code)]
mod common;
#[allow(dead_code)]
mod db_servers;
mod demo;
mod dist_files;
mod dist_from;
mod dist_from_ns;
mod dist_k8s_apply;
mod dist_lab;
mod dist_merge;
mod dist_netns;
mod dist_segment;
mod dist_slurm;
mod examples;
mod examples_first_screen;
mod exec_live;
mod exec_workload;
mod faults;
mod first_screen;
mod fuzz_adapters;
mod fuzz_common;
mod fuzz_plan;
mod http_protocols;
mod http_truth;
mod live_feed;
#[allow(dead_code)]
mod live_openmetrics;
mod live_server;
mod live_tui;
mod load_builtin;
mod load_cpu;
mod load_disk;
mod load_mem;
mod load_net;
mod load_oltp;
mod monitor_fixtures;
mod monitor_free;
mod monitor_truth;
mod oltp_conflicts;
mod oltp_faults;
mod oltp_servers;
mod oltp_tls_mysql;
mod oltp_tls_pg;
mod plan_fixtures;
mod plan_hints;
mod plan_hostile;
mod plan_parse;
mod plan_secrets;
mod plan_variant_settings;
mod probe;
mod profile_run;
mod registry_metrics;
mod remote_agent;
mod remote_agent_killed;
mod remote_clock;
mod remote_profile;
mod remote_programs;
mod remote_run;
mod remote_ssh;
mod report_answers;
mod report_browser;
mod report_cli;
#[allow(dead_code)]
mod report_common;
mod report_cost;
mod report_diagnoses;
mod report_findings;
mod report_honest;
mod report_memory;
mod report_percentiles;
mod report_pool_vs_threads;
mod report_related;
mod report_render;
mod report_secrets;
mod report_summary;
mod run_log;
mod run_plan;
mod run_probes;
mod run_repetitions;
mod run_resume;
mod run_sampling;
mod run_secrets;
mod run_skip_unless;
mod runner_target;
mod serve;
mod store_damage;
mod store_failures;
mod store_packed;
mod store_roundtrip;
mod tls_certs;
