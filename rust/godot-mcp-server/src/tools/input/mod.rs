//! Input: the project's input map, its actions and their events ([`map`]), and input
//! played into and recorded from a running game ([`play`]).

pub(crate) mod map;
pub(crate) mod play;
