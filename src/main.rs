//! The `faultgate` binary: everything lives in the library's `cli` module.

fn main() {
    std::process::exit(faultgate::cli::main());
}
