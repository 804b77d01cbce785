//! The input map: actions and their events.

pub mod map;
