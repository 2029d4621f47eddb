//! Policy tests: validation messages, every key with a violating run and a look-alike that passes.
