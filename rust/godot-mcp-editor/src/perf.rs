//! The engine's performance monitors (`Performance.get_monitor`), one snapshot as JSON.
//! Shared by the game's probe (`monitors`) and the editor bridge (`editor.monitors`), so
//! both planes answer with the same names and units; the server samples snapshots over a
//! window and reduces them to min/avg/max.

use godot::classes::Performance;
use godot::classes::performance::Monitor;
use godot::obj::Singleton;
use serde_json::{Map, Value, json};

/// (wire name, monitor, scale): times are seconds in the engine, milliseconds on the wire.
const MONITORS: [(&str, Monitor, f64); 18] = [
    ("fps", Monitor::TIME_FPS, 1.0),
    ("process_time_ms", Monitor::TIME_PROCESS, 1000.0),
    ("physics_time_ms", Monitor::TIME_PHYSICS_PROCESS, 1000.0),
    (
        "navigation_time_ms",
        Monitor::TIME_NAVIGATION_PROCESS,
        1000.0,
    ),
    ("memory_static_bytes", Monitor::MEMORY_STATIC, 1.0),
    ("memory_static_max_bytes", Monitor::MEMORY_STATIC_MAX, 1.0),
    ("objects", Monitor::OBJECT_COUNT, 1.0),
    ("resources", Monitor::OBJECT_RESOURCE_COUNT, 1.0),
    ("nodes", Monitor::OBJECT_NODE_COUNT, 1.0),
    ("orphan_nodes", Monitor::OBJECT_ORPHAN_NODE_COUNT, 1.0),
    ("draw_calls", Monitor::RENDER_TOTAL_DRAW_CALLS_IN_FRAME, 1.0),
    ("objects_drawn", Monitor::RENDER_TOTAL_OBJECTS_IN_FRAME, 1.0),
    (
        "primitives_drawn",
        Monitor::RENDER_TOTAL_PRIMITIVES_IN_FRAME,
        1.0,
    ),
    ("video_memory_bytes", Monitor::RENDER_VIDEO_MEM_USED, 1.0),
    (
        "physics_2d_active_objects",
        Monitor::PHYSICS_2D_ACTIVE_OBJECTS,
        1.0,
    ),
    (
        "physics_2d_collision_pairs",
        Monitor::PHYSICS_2D_COLLISION_PAIRS,
        1.0,
    ),
    (
        "physics_3d_active_objects",
        Monitor::PHYSICS_3D_ACTIVE_OBJECTS,
        1.0,
    ),
    (
        "physics_3d_collision_pairs",
        Monitor::PHYSICS_3D_COLLISION_PAIRS,
        1.0,
    ),
];

/// Every monitor's value now, by wire name.
pub(crate) fn snapshot() -> Value {
    let perf = Performance::singleton();
    let mut out = Map::new();
    for (name, monitor, scale) in MONITORS {
        out.insert(name.into(), json!(perf.get_monitor(monitor) * scale));
    }
    Value::Object(out)
}
