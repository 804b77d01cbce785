//! The running game, as the domains that work on it share it (runtime, input, profiler,
//! debugger, tests): no domain imports another, so what they have in common lives here.
//!
//! - [`tool`]: the shapes of a tool on the running game (its `meta`, `in_set`, the
//!   arguments that name only a session).
//! - [`session`]: the session an id names, or the newest running game, and the refusal
//!   when none runs (`session_of`); how a supervised process ended (`end_report`,
//!   `ended_json`).
//! - [`display`]: headless or with a renderer, and why; Godot's renderer overrides; what
//!   a process that exited early printed.
//! - [`probe`]: requests to the game's probe (`probe_request`, `probe_reply`,
//!   `game_property`, `ensure_not_breaked`), the synthetic `InputEvent`, the ticker of a
//!   sampling tool.
//! - [`clock`]: the held clock's step, its sampled rows and digests, and inputs played on
//!   frames (`play_on_frames`).
//! - [`launch`]: a game started with the probe (`launch_game`), the held clock's tick rate.
//! - [`check`]: expressions evaluated in a saved scene run headless (create_nodes' `check`).
//! - [`debug`]: the game's remote debugger connection as the debugger and profiler tools
//!   share it (`debugged`, `debug_error`, the debugger tools' `meta`).

pub(crate) mod check;
pub(crate) mod clock;
pub(crate) mod debug;
pub(crate) mod display;
pub(crate) mod launch;
pub(crate) mod probe;
pub(crate) mod session;
pub(crate) mod tool;
