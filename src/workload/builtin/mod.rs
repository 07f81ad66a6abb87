//! Built-in workloads (CPU, memory, disk) behind the same `Workload` trait. Not built yet.
