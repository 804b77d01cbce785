//! run_playtest: a `res://…/*.playtest.json` file (scene, seed, input on frames,
//! watches, expectations) run headless from a cold start, `runs` times; the report
//! gives pass/fail per expectation and, when two runs' digests differ, the first
//! frame and value that diverged (docs/playtesting.md).

use crate::error::{ErrorCode, ToolError};
use crate::planes::process::{STOP_GRACE, Session, control::ControlError};
use crate::respath::ResPath;
use crate::rules::{EffectKind, RuntimeFlags};
use crate::state::AppState;
use crate::tools::kit::game::clock::{self, MAX_FRAMES, Row, Sampling};
use crate::tools::kit::game::launch::{GameLaunch, launch_game};
use crate::tools::kit::game::probe::{
    InputEvent, await_probe, probe_error, probe_reply, probe_request,
};
use crate::tools::kit::game::tool::meta;
use crate::tools::{Call, Out, ToolDef};
use godot_mcp_protocol::ProbeRequest;
use godot_mcp_protocol::probe::{ClockUnit, Watch};
use godot_mcp_protocol::probe::{HeldReply, ReleasedReply, ValueReply};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// Most runs of one call.
const MAX_RUNS: u32 = 20;
/// Most rows returned (of the first run).
const MAX_ROWS: usize = 2_000;
/// Largest playtest file read, in bytes.
const MAX_PLAYTEST_BYTES: u64 = 1024 * 1024;

/// The playtest file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Playtest {
    pub scene: String,
    #[serde(default)]
    pub seed: Option<i64>,
    /// Physics frames to run from frame 0.
    pub frames: u64,
    #[serde(default)]
    pub input: Vec<FrameInput>,
    #[serde(default)]
    pub watch: Vec<Watch>,
    #[serde(default)]
    pub every: Option<u64>,
    #[serde(default)]
    pub at: Vec<u64>,
    #[serde(default)]
    pub precision: Option<u32>,
    #[serde(default)]
    pub expect: Vec<Expectation>,
}

/// An input on a frame.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FrameInput {
    pub at_frame: u64,
    #[serde(default)]
    pub hold_frames: Option<u64>,
    pub event: InputEvent,
}

/// An Expression that must be truthy after `frame`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Expectation {
    pub frame: u64,
    pub expression: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct PlaytestArgs {
    /// The playtest file (res://…/*.playtest.json).
    path: ResPath,
    /// Runs, each from a cold start, 1-20 (default 2: the second checks the first).
    #[serde(default)]
    #[schemars(range(min = 1, max = 20))]
    runs: Option<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct ExpectationOut {
    pub frame: u64,
    pub expression: String,
    /// True in every run.
    pub passed: bool,
    /// Its value in the first run.
    pub value: Value,
    /// Runs (0-based) where it failed.
    pub failed_runs: Vec<u32>,
}

/// The first place two runs differ.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct Divergence {
    /// The run (0-based) that differs from run 0.
    pub run: u32,
    pub frame: u64,
    /// Index into the playtest's watch list.
    pub watch: usize,
    /// Run 0's value, and this run's.
    pub expected: Value,
    pub got: Value,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct RunStats {
    pub run: u32,
    pub session_id: String,
    /// Wall time of the frames (launch excluded).
    pub elapsed_ms: u64,
    pub frames_per_second: f64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct PlaytestOut {
    pub path: String,
    pub scene: String,
    pub seed: Option<i64>,
    pub frames: u64,
    pub runs: u32,
    /// Every expectation held in every run.
    pub passed: bool,
    pub expectations: Vec<ExpectationOut>,
    /// Every run gave run 0's digests on every sampled frame.
    pub deterministic: bool,
    pub divergence: Option<Divergence>,
    pub precision: u32,
    /// Run 0's sampled rows (at most 2000).
    pub rows: Vec<Row>,
    pub stats: Vec<RunStats>,
}

/// One run's findings.
struct RunOut {
    rows: Vec<Row>,
    /// Per expectation: its value.
    values: Vec<Value>,
    stats: RunStats,
}

fn bad_file(message: impl Into<String>) -> ToolError {
    ToolError::invalid_params("path", message)
}

/// Reads and checks a playtest file.
fn load(state: &AppState, path: &ResPath) -> Result<Playtest, ToolError> {
    if !path.to_string().ends_with(".playtest.json") {
        return Err(bad_file("a playtest file's name ends in .playtest.json"));
    }
    let real = state.project.resolve("path", path)?;
    let cannot_read = |e: std::io::Error| {
        ToolError::new(
            ErrorCode::ResourceNotFound,
            format!("cannot read {path}: {e}"),
        )
        .param("path")
    };
    let mut text = String::new();
    {
        use std::io::Read;
        std::fs::File::open(&real)
            .map_err(cannot_read)?
            .take(MAX_PLAYTEST_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(cannot_read)?;
    }
    if text.len() as u64 > MAX_PLAYTEST_BYTES {
        return Err(bad_file(format!(
            "{path} is larger than {MAX_PLAYTEST_BYTES} bytes; a playtest file is at most that"
        )));
    }
    let p: Playtest = serde_json::from_str(&text)
        .map_err(|e| bad_file(format!("{path} is not a playtest: {e}")))?;
    if !(1..=MAX_FRAMES).contains(&p.frames) {
        return Err(bad_file(format!("frames must be 1–{MAX_FRAMES}")));
    }
    let scene = match ResPath::parse(&p.scene) {
        Ok(scene) if p.scene.ends_with(".tscn") || p.scene.ends_with(".scn") => scene,
        _ => {
            return Err(bad_file(format!(
                "scene {:?} is not a res:// scene",
                p.scene
            )));
        }
    };
    // Resolved like every argument path: a symlink out of the project is refused.
    state.project.resolve("path", &scene).map_err(|mut e| {
        e.message = format!("{path}: scene {}: {}", p.scene, e.message);
        e
    })?;
    for (i, inp) in p.input.iter().enumerate() {
        if inp.at_frame == 0 || inp.at_frame > p.frames {
            return Err(bad_file(format!(
                "input[{i}].at_frame must be 1–{} (the playtest's frames)",
                p.frames
            )));
        }
    }
    for (i, e) in p.expect.iter().enumerate() {
        if e.frame > p.frames || e.expression.trim().is_empty() {
            return Err(bad_file(format!(
                "expect[{i}] needs a frame 0–{} and an expression",
                p.frames
            )));
        }
    }
    Ok(p)
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        // A failed expression (`watch_error`) holds nothing.
        Value::Object(o) => !o.contains_key("$error"),
    }
}

pub(super) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            meta(
                "run_playtest",
                "Run a playtest file",
                "Run a res://…/*.playtest.json (scene, seed, input on frames, watches, \
                 expectations) headless from a cold start `runs` times; pass/fail per \
                 expectation and the first frame where runs diverged (executes code; \
                 approval-gated).",
                Some(EffectKind::ProcessLaunch),
            ),
            run_playtest,
        )
        .with_runtime_flags(RuntimeFlags {
            writes_disk: false,
            executes_code: true,
        }),
    ]
}

async fn run_playtest(Call { state, args, .. }: Call<PlaytestArgs>) -> Out<PlaytestOut> {
    let runs = ToolError::arg_in(
        "runs",
        args.runs,
        2,
        1..=MAX_RUNS,
        format!("runs must be 1–{MAX_RUNS}"),
    )?;
    let p = load(&state, &args.path)?;
    let sampling = Sampling {
        watch: p.watch.clone(),
        every: p.every,
        at: p.at.clone(),
        precision: p.precision,
    };
    let precision = sampling.check().map_err(|e| {
        let mut e = e;
        e.message = format!("{}: {}", args.path, e.message);
        e
    })?;
    let scene = ResPath::parse(&p.scene).map_err(|_| bad_file("scene"))?;
    let mut outs = Vec::new();
    for run in 0..runs {
        outs.push(one_run(&state, &p, &scene, &sampling, precision, run).await?);
    }
    let mut expectations: Vec<ExpectationOut> = p
        .expect
        .iter()
        .enumerate()
        .map(|(i, e)| ExpectationOut {
            frame: e.frame,
            expression: e.expression.clone(),
            passed: true,
            value: outs[0].values[i].clone(),
            failed_runs: Vec::new(),
        })
        .collect();
    for (run, o) in outs.iter().enumerate() {
        for (i, v) in o.values.iter().enumerate() {
            if !truthy(v) {
                expectations[i].passed = false;
                expectations[i].failed_runs.push(run as u32);
            }
        }
    }
    let divergence = first_divergence(&outs, precision);
    let mut outs = outs.into_iter();
    let first = outs.next().expect("one run at least");
    let mut stats = vec![first.stats];
    stats.extend(outs.map(|o| o.stats));
    Ok(PlaytestOut {
        path: args.path.to_string(),
        scene: p.scene,
        seed: p.seed,
        frames: p.frames,
        runs,
        passed: expectations.iter().all(|e| e.passed),
        expectations,
        deterministic: divergence.is_none(),
        divergence,
        precision,
        rows: first.rows.into_iter().take(MAX_ROWS).collect(),
        stats,
    })
}

/// The earliest frame (then the lowest run) where a run's digest differs from run 0's.
fn first_divergence(outs: &[RunOut], precision: u32) -> Option<Divergence> {
    let reference = &outs.first()?.rows;
    let mut best: Option<Divergence> = None;
    for (run, o) in outs.iter().enumerate().skip(1) {
        let found = reference.iter().zip(&o.rows).find_map(|(a, b)| {
            if a.frame == b.frame && a.digest == b.digest {
                return None;
            }
            let watch = (0..a.values.len().max(b.values.len()))
                .find(|&i| {
                    let x = a.values.get(i).map(|v| clock::rounded(v, precision));
                    let y = b.values.get(i).map(|v| clock::rounded(v, precision));
                    x != y
                })
                .unwrap_or(0);
            Some(Divergence {
                run: run as u32,
                frame: a.frame.min(b.frame),
                watch,
                expected: a.values.get(watch).cloned().unwrap_or(Value::Null),
                got: b.values.get(watch).cloned().unwrap_or(Value::Null),
            })
        });
        let found = found.or_else(|| {
            // One run sampled fewer frames (it ended early): the first missing one.
            let (a, b) = (reference.len(), o.rows.len());
            (a != b).then(|| {
                let at = a.min(b);
                let longer = if a > b { reference } else { &o.rows };
                Divergence {
                    run: run as u32,
                    frame: longer[at].frame,
                    watch: 0,
                    expected: reference.get(at).map_or(Value::Null, |r| json!(r.values)),
                    got: o.rows.get(at).map_or(Value::Null, |r| json!(r.values)),
                }
            })
        });
        if let Some(d) = found
            && best.as_ref().is_none_or(|b| d.frame < b.frame)
        {
            best = Some(d);
        }
    }
    best
}

/// One cold start: launch held, schedule the input, run to each expectation's frame
/// and to the end, stop the game.
async fn one_run(
    state: &Arc<AppState>,
    p: &Playtest,
    scene: &ResPath,
    sampling: &Sampling,
    precision: u32,
    run: u32,
) -> Result<RunOut, ToolError> {
    let (session, _) = launch_game(
        state,
        GameLaunch {
            purpose: "run_playtest",
            scene: Some(scene),
            display: vec!["--headless".into()],
            held: true,
            seed: p.seed,
            blank: false,
        },
    )
    .await?;
    let result = drive(&session, p, sampling, precision, run).await;
    // Every way out: release, then stop the game.
    let _ = session
        .control
        .request::<ReleasedReply>(ProbeRequest::ReleaseAll {}, Duration::from_millis(500))
        .await;
    let _ = session.stop(STOP_GRACE).await;
    result
}

async fn drive(
    session: &Arc<Session>,
    p: &Playtest,
    sampling: &Sampling,
    precision: u32,
    run: u32,
) -> Result<RunOut, ToolError> {
    await_probe(session).await;
    if session.control.hello().is_none() {
        return Err(probe_error(ControlError::NotConnected));
    }
    for inp in &p.input {
        let request = ProbeRequest::Input {
            event: inp.event.wire(),
            hold_ms: 0,
            at_frame: Some(inp.at_frame),
            hold_frames: Some(inp.hold_frames.unwrap_or(1)),
        };
        let _: HeldReply = probe_request(session, request).await?;
    }
    let mut stops: Vec<u64> = p.expect.iter().map(|e| e.frame).collect();
    stops.push(p.frames);
    stops.sort_unstable();
    stops.dedup();
    let mut values = vec![Value::Null; p.expect.len()];
    let mut rows = Vec::new();
    let mut frame = 0u64;
    let start = std::time::Instant::now();
    for stop in stops {
        if stop > frame {
            let (reply, got) = clock::step(
                session,
                stop - frame,
                ClockUnit::Physics,
                None,
                sampling,
                precision,
            )
            .await?;
            rows.extend(got);
            frame = reply.frame;
        }
        for (i, e) in p.expect.iter().enumerate().filter(|(_, e)| e.frame == stop) {
            let request = ProbeRequest::Evaluate {
                expression: e.expression.clone(),
            };
            values[i] = match probe_reply::<ValueReply>(session, request).await? {
                Ok(v) => v.value.to_json(),
                // An expression that fails is a failed expectation, said as it is.
                Err(r) => godot_mcp_protocol::probe::watch_error(&r.error, &r.message),
            };
        }
    }
    let elapsed = start.elapsed();
    Ok(RunOut {
        rows,
        values,
        stats: RunStats {
            run,
            session_id: session.txn.to_string(),
            elapsed_ms: elapsed.as_millis() as u64,
            frames_per_second: if elapsed.as_secs_f64() > 0.0 {
                (frame as f64 / elapsed.as_secs_f64() * 10.0).round() / 10.0
            } else {
                0.0
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(rows: Vec<(u64, Vec<Value>)>) -> RunOut {
        RunOut {
            rows: rows
                .into_iter()
                .map(|(frame, values)| {
                    clock::row(&godot_mcp_protocol::probe::WatchRow { frame, values }, 3)
                })
                .collect(),
            values: vec![],
            stats: RunStats {
                run: 0,
                session_id: String::new(),
                elapsed_ms: 0,
                frames_per_second: 0.0,
            },
        }
    }

    #[test]
    fn the_first_diverging_frame_and_value_are_named() {
        let a = out(vec![
            (1, vec![json!(1), json!(0.5)]),
            (2, vec![json!(2), json!(0.75)]),
        ]);
        let same = out(vec![
            (1, vec![json!(1), json!(0.5001)]),
            (2, vec![json!(2), json!(0.75)]),
        ]);
        let other = out(vec![
            (1, vec![json!(1), json!(0.5)]),
            (2, vec![json!(2), json!(0.9)]),
        ]);
        assert!(first_divergence(&[out(vec![]), out(vec![])], 3).is_none());
        let a2 = out(vec![
            (1, vec![json!(1), json!(0.5)]),
            (2, vec![json!(2), json!(0.75)]),
        ]);
        assert!(first_divergence(&[a2, same], 3).is_none());
        let d = first_divergence(&[a, other], 3).unwrap();
        assert_eq!((d.run, d.frame, d.watch), (1, 2, 1));
        assert_eq!((d.expected, d.got), (json!(0.75), json!(0.9)));
    }

    /// Guards against (issue 41, item 12): the `scene` of a playtest file loaded
    /// unresolved (a symlink to a scene outside the project was run), and a
    /// playtest file of any size read whole. The scene is refused PATH_REFUSED
    /// naming the file; a file past the bound is refused before it is parsed.
    #[test]
    fn a_playtest_scene_outside_the_project_and_a_huge_file_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("project.godot"), "config_version=5\n").unwrap();
        std::fs::write(outside.path().join("evil.tscn"), "[gd_scene format=3]\n").unwrap();
        godot_mcp_os::fs::symlink(outside.path(), root.join("out")).unwrap();
        std::fs::write(root.join("in.tscn"), "[gd_scene format=3]\n").unwrap();
        let p =
            crate::project_root::Project::discover(Some(root), std::path::Path::new("/")).unwrap();
        let mut journal = godot_mcp_journal::Journal::open(&root.join(".state"), p.root()).unwrap();
        journal.reconcile().unwrap();
        let safety = crate::rules::SafetyState::new(
            crate::rules::ApprovalConfig::default(),
            crate::rules::Toolset::ALL.into_iter().collect(),
        );
        let state = AppState::new(p, journal, safety);
        let file = |scene: &str| json!({"scene": scene, "frames": 10}).to_string();
        std::fs::write(root.join("ok.playtest.json"), file("res://in.tscn")).unwrap();
        std::fs::write(root.join("out.playtest.json"), file("res://out/evil.tscn")).unwrap();
        let path = |s: &str| ResPath::parse(s).unwrap();
        load(&state, &path("res://ok.playtest.json")).unwrap();
        let err = load(&state, &path("res://out.playtest.json")).unwrap_err();
        assert_eq!(err.code, ErrorCode::PathRefused, "{err:?}");
        assert!(
            err.message.contains("res://out/evil.tscn"),
            "{}",
            err.message
        );
        let mut huge = file("res://in.tscn");
        huge.push_str(&" ".repeat(MAX_PLAYTEST_BYTES as usize));
        std::fs::write(root.join("huge.playtest.json"), huge).unwrap();
        let err = load(&state, &path("res://huge.playtest.json")).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidParams, "{err:?}");
        assert!(err.message.contains("larger than"), "{}", err.message);
    }

    #[test]
    fn truthiness_follows_godot() {
        assert!(truthy(&json!(true)) && truthy(&json!(2)) && truthy(&json!("x")));
        assert!(!truthy(&json!(false)) && !truthy(&json!(0)) && !truthy(&json!(null)));
    }
}
