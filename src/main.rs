#![warn(clippy::undocumented_unsafe_blocks)]

fn main() {
    std::process::exit(perflab::cli::main());
}
