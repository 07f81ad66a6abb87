//! The `exec` workload: run any command, record its exit status and time; tool adapters parse output.
