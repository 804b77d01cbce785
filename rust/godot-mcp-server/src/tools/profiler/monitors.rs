//! Performance monitors (FPS, process/physics ms, draw calls, memory, objects, nodes,
//! physics) of a running game, through its probe, or of the editor: min/avg/max each.

use crate::error::ToolError;
use crate::rules::Toolset;
use crate::tools::kit::game::probe::{probe_request, sampling_ticker};
use crate::tools::kit::game::session::session_of;
use crate::tools::kit::game::tool::{in_set, meta};
use crate::tools::{Call, Out, ToolDef};
use godot_mcp_protocol::ProbeRequest;
use godot_mcp_protocol::commands::{self as cmd};
use godot_mcp_protocol::probe::MonitorsReply;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::Instant;

pub(crate) fn tools() -> Vec<ToolDef> {
    let rt = |name, title, description| meta(name, title, description, None);
    vec![ToolDef::new(
        in_set(
            rt(
                "get_performance_monitors",
                "Performance monitors of the game or editor",
                "Sample Godot's performance monitors (FPS, process/physics ms, draw calls, \
                     memory, objects, nodes, physics) of a running game or the editor; \
                     min/avg/max per monitor.",
            ),
            Toolset::Profiling,
        ),
        get_performance_monitors,
    )]
}

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum MonitorTarget {
    /// A running game (through its probe).
    #[default]
    Game,
    /// The connected editor (through the bridge).
    Editor,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MonitorsArgs {
    /// game (default) or editor.
    #[serde(default)]
    target: MonitorTarget,
    /// The game session (default: the newest running game).
    #[serde(default)]
    session_id: Option<String>,
    /// Snapshots, 1-100 (default 5).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    samples: Option<u32>,
    /// Ms between snapshots, 10-5000 (default 200).
    #[serde(default)]
    #[schemars(range(min = 10, max = 5000))]
    interval_ms: Option<u64>,
}

/// One monitor over a sampling window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub(crate) struct Stats {
    pub min: f64,
    pub avg: f64,
    pub max: f64,
    pub last: f64,
}

/// Min, average, max and last value of each monitor over `snapshots`.
fn reduce(snapshots: &[Value]) -> BTreeMap<String, Stats> {
    let mut by_name: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for s in snapshots {
        for (name, v) in s.as_object().into_iter().flatten() {
            if let Some(x) = v.as_f64() {
                by_name.entry(name.as_str()).or_default().push(x);
            }
        }
    }
    let mut out = BTreeMap::new();
    for (name, xs) in by_name {
        let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
        let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let avg = xs.iter().sum::<f64>() / xs.len() as f64;
        out.insert(
            name.into(),
            Stats {
                min,
                avg,
                max,
                last: xs[xs.len() - 1],
            },
        );
    }
    out
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct MonitorsOut {
    pub target: &'static str,
    pub samples: usize,
    pub window_ms: u64,
    /// Per monitor (fps, process_time_ms, nodes, ...).
    pub monitors: BTreeMap<String, Stats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

async fn get_performance_monitors(
    Call { state, args, .. }: Call<MonitorsArgs>,
) -> Out<MonitorsOut> {
    let samples = args.samples.unwrap_or(5);
    let interval_ms = args.interval_ms.unwrap_or(200);
    let mut ticker = sampling_ticker(samples, 100, interval_ms)?;
    let session = match args.target {
        MonitorTarget::Game => Some(session_of(&state, args.session_id.as_deref())?),
        MonitorTarget::Editor if args.session_id.is_some() => {
            return Err(ToolError::invalid_params(
                "session_id",
                "session_id names a game; the editor target takes none",
            ));
        }
        MonitorTarget::Editor => None,
    };
    let start = Instant::now();
    let mut snapshots = Vec::new();
    for _ in 0..samples {
        ticker.tick().await;
        let v = match &session {
            Some(s) => {
                let m: MonitorsReply = probe_request(s, ProbeRequest::Monitors {}).await?;
                json!({"monitors": m.monitors})
            }
            None => {
                let st = state.clone();
                tokio::task::spawn_blocking(move || {
                    crate::tools::kit::editor::ask(&st, &cmd::EditorMonitors {}, None)
                })
                .await
                .map_err(|e| ToolError::internal(format!("editor request task failed: {e}")))??
            }
        };
        snapshots.push(v["monitors"].clone());
    }
    Ok(MonitorsOut {
        target: match args.target {
            MonitorTarget::Game => "game",
            MonitorTarget::Editor => "editor",
        },
        samples: snapshots.len(),
        window_ms: start.elapsed().as_millis() as u64,
        monitors: reduce(&snapshots),
        session_id: session.map(|s| s.txn.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monitors_reduce_to_min_avg_max_last() {
        let r = reduce(&[
            json!({"fps": 60.0, "nodes": 3.0}),
            json!({"fps": 30.0, "nodes": 3.0}),
        ]);
        assert_eq!(
            r["fps"],
            Stats {
                min: 30.0,
                avg: 45.0,
                max: 60.0,
                last: 30.0
            }
        );
        assert_eq!(r["nodes"].avg, 3.0);
    }
}
