//! The particles family: GPU particles (with a new ParticleProcessMaterial) and CPU
//! particles, 2D or 3D; colour ramps (a Gradient); presets, a table of property sets here
//! in the server. Each tool is one `scene.steps` recipe: one undo action.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::ToolError;
use crate::rules::Toolset;
use crate::rules::class;
use crate::tools::kit::steps::tool::recipe;
use crate::tools::kit::steps::{Dim, Steps, color, meta, new_resource, vec2, vec3};
use crate::tools::{NoFields, ToolDef};

/// GPU (GPUParticles, with a ParticleProcessMaterial) or CPU (CPUParticles).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Kind {
    Gpu,
    Cpu,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Preset {
    Fire,
    Smoke,
    Sparks,
    Rain,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AddArgs {
    /// Parent node path ("." is the root).
    parent: String,
    /// Node name.
    name: String,
    dim: Dim,
    kind: Kind,
    #[serde(default)]
    amount: Option<u32>,
    /// Seconds.
    #[serde(default)]
    lifetime: Option<f64>,
    /// Apply a preset too.
    #[serde(default)]
    preset: Option<Preset>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RampArgs {
    /// The particles node path.
    node: String,
    kind: Kind,
    /// Colours [r,g,b,a] (0-1), in order over the lifetime.
    #[schemars(length(min = 1, max = 64))]
    colors: Vec<[f64; 4]>,
    /// Their positions 0-1 (default: evenly spread).
    #[serde(default)]
    offsets: Option<Vec<f64>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PresetArgs {
    /// The particles node path.
    node: String,
    dim: Dim,
    kind: Kind,
    preset: Preset,
}

/// One preset's numbers, up being +y (flipped for 2D, whose y points down).
struct Numbers {
    amount: u32,
    lifetime: f64,
    direction: [f64; 3],
    spread: f64,
    gravity: [f64; 3],
    velocity: (f64, f64),
    scale: (f64, f64),
    color: [f64; 4],
}

/// The presets' numbers, one row each: amount, lifetime, direction, spread, gravity,
/// velocity (min, max), scale (min, max), colour.
#[rustfmt::skip]
fn numbers(p: Preset) -> Numbers {
    let (amount, lifetime, direction, spread, gravity, velocity, scale, color) = match p {
        Preset::Fire =>   (60,  1.0, [0.0, 1.0, 0.0],  20.0,  [0.0, 40.0, 0.0],   (20.0, 60.0),   (0.5, 1.5), [1.0, 0.5, 0.1, 1.0]),
        Preset::Smoke =>  (30,  3.0, [0.0, 1.0, 0.0],  30.0,  [0.0, 10.0, 0.0],   (10.0, 25.0),   (1.0, 3.0), [0.5, 0.5, 0.5, 0.6]),
        Preset::Sparks => (40,  0.6, [0.0, 1.0, 0.0],  180.0, [0.0, -98.0, 0.0],  (80.0, 160.0),  (0.2, 0.5), [1.0, 0.9, 0.4, 1.0]),
        Preset::Rain =>   (200, 1.5, [0.0, -1.0, 0.0], 5.0,   [0.0, -400.0, 0.0], (200.0, 300.0), (0.3, 0.6), [0.6, 0.7, 1.0, 0.8]),
    };
    Numbers { amount, lifetime, direction, spread, gravity, velocity, scale, color }
}

/// The property sets of `preset` on `node`: a GPU node's on its process material
/// (`process_material:…`), a CPU node's on the node itself.
fn preset_steps(steps: &mut Steps, node: &str, dim: Dim, kind: Kind, preset: Preset) {
    let n = numbers(preset);
    let up = |v: [f64; 3]| match dim {
        Dim::TwoD => [v[0], -v[1], v[2]],
        Dim::ThreeD => v,
    };
    let (dir, grav) = (up(n.direction), up(n.gravity));
    steps.set(node, "amount", json!(n.amount));
    steps.set(node, "lifetime", json!(n.lifetime));
    let (prefix, dir, grav, scale_min, scale_max): (&str, Value, Value, &str, &str) =
        match (kind, dim) {
            (Kind::Gpu, _) => (
                "process_material:",
                vec3(dir),
                vec3(grav),
                "scale_min",
                "scale_max",
            ),
            (Kind::Cpu, Dim::TwoD) => (
                "",
                vec2([dir[0], dir[1]]),
                vec2([grav[0], grav[1]]),
                "scale_amount_min",
                "scale_amount_max",
            ),
            (Kind::Cpu, Dim::ThreeD) => (
                "",
                vec3(dir),
                vec3(grav),
                "scale_amount_min",
                "scale_amount_max",
            ),
        };
    let sets = [
        ("direction", dir),
        ("spread", json!(n.spread)),
        ("gravity", grav),
        ("initial_velocity_min", json!(n.velocity.0)),
        ("initial_velocity_max", json!(n.velocity.1)),
        (scale_min, json!(n.scale.0)),
        (scale_max, json!(n.scale.1)),
        ("color", color(n.color)),
    ];
    for (k, v) in sets {
        steps.set(node, &format!("{prefix}{k}"), v);
    }
}

pub(crate) fn tools() -> Vec<ToolDef> {
    use class::Mutating;
    vec![
        recipe(
            meta(
                Toolset::Particles,
                "add_particles",
                "Add particles",
                "Add GPUParticles (with a new ParticleProcessMaterial) or CPUParticles, 2D or \
                 3D, optionally with a preset, as one undo action.",
                Mutating,
            ),
            |_, a: AddArgs, steps| {
                let stem = match a.kind {
                    Kind::Gpu => "GPUParticles",
                    Kind::Cpu => "CPUParticles",
                };
                let node = steps.create(&a.parent, &a.dim.class(stem), &a.name);
                if a.kind == Kind::Gpu {
                    steps.set(
                        &node,
                        "process_material",
                        new_resource("ParticleProcessMaterial", json!({})),
                    );
                }
                if let Some(p) = a.preset {
                    preset_steps(steps, &node, a.dim, a.kind, p);
                }
                steps.set_some(
                    &node,
                    &[
                        ("amount", a.amount.map(|v| json!(v))),
                        ("lifetime", a.lifetime.map(|v| json!(v))),
                    ],
                );
                Ok(NoFields {})
            },
        ),
        recipe(
            meta(
                Toolset::Particles,
                "set_particles_color_ramp",
                "Set a particles colour ramp",
                "Set a particles node's colour over lifetime (a new Gradient; on a GPU node's \
                 process material).",
                Mutating,
            ),
            |_, a: RampArgs, steps| {
                let n = a.colors.len();
                let offsets = match a.offsets {
                    Some(o) if o.len() != n => {
                        return Err(ToolError::invalid_params(
                            "offsets",
                            "one offset per colour",
                        ));
                    }
                    Some(o) if o.iter().any(|v| !(0.0..=1.0).contains(v)) => {
                        return Err(ToolError::invalid_params("offsets", "offsets are 0..1"));
                    }
                    Some(o) => o,
                    None if n == 1 => vec![0.0],
                    None => (0..n).map(|i| i as f64 / (n - 1) as f64).collect(),
                };
                let gradient = new_resource(
                    "Gradient",
                    json!({
                        "offsets": {"$type": "PackedFloat32Array", "values": offsets},
                        "colors": {"$type": "PackedColorArray", "values": a.colors},
                    }),
                );
                match a.kind {
                    Kind::Gpu => steps.set(
                        &a.node,
                        "process_material:color_ramp",
                        new_resource("GradientTexture1D", json!({"gradient": gradient})),
                    ),
                    Kind::Cpu => steps.set(&a.node, "color_ramp", gradient),
                }
                Ok(NoFields {})
            },
        ),
        recipe(
            meta(
                Toolset::Particles,
                "apply_particles_preset",
                "Apply a particles preset",
                "Set a particles node's amount, lifetime, direction, spread, gravity, velocity, \
                 scale and colour from a preset: fire, smoke, sparks or rain.",
                Mutating,
            ),
            |_, a: PresetArgs, steps| {
                preset_steps(steps, &a.node, a.dim, a.kind, a.preset);
                Ok(NoFields {})
            },
        ),
    ]
}
