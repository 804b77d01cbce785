//! Operator repair (filled in below).
