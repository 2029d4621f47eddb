//! The `faultgate` binary: everything lives in the library's `cli` module.

// The run allocates many small strings and maps across threads; glibc's allocator spent a fifth of the
// time in malloc and heap consolidation, mimalloc's per-thread free lists do not.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(faultgate::cli::main());
}
