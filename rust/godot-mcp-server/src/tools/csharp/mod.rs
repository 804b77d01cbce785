//! build_csharp: `dotnet build` of the project's C# project and MSBuild's diagnostics,
//! returned as data; the build itself (the SDK, the supervised run, the diagnostics, the
//! `check: "build"` of the writes that take it) is the kit's: `tools/kit/dotnet_build.rs`.
//! C# scripts read as Godot's source generators see them are the kit's too
//! (`tools/kit/cs_script.rs`: the script tools and attach_script read them).

use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::ToolError;
use crate::respath::ResPath;
use crate::rules::RuntimeFlags;
use crate::rules::class;
use crate::rules::{EffectKind, Toolset};
use crate::tools::kit::dotnet_build::{BuildOut, DEFAULT_TIMEOUT_MS, pick_project, run_build, sdk};
use crate::tools::{Call, Out, ToolDef, ToolMeta};

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            ToolMeta {
                name: "build_csharp",
                title: "Build the C# project",
                description: "dotnet build of the project's .csproj (supervised; needs the .NET \
                    SDK): ok, and MSBuild's errors and warnings with file, line, column, code.",
                class: class::Runtime,
                toolset: Toolset::Csharp,
                effect: Some(EffectKind::ProcessLaunch),
            },
            build_csharp,
        )
        // MSBuild runs the project's targets, analyzers and source generators, and
        // writes obj/ and .godot/mono/.
        .with_runtime_flags(RuntimeFlags {
            writes_disk: true,
            executes_code: true,
        }),
    ]
}

const MAX_TIMEOUT_MS: u64 = 1_800_000;
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BuildArgs {
    /// The .csproj or .sln (default: the one .csproj beside project.godot).
    #[serde(default)]
    project: Option<ResPath>,
    /// Kill the build after this many ms, 1-1800000 (default 300000).
    #[serde(default)]
    timeout_ms: Option<u64>,
}

async fn build_csharp(Call { state, args, .. }: Call<BuildArgs>) -> Out<BuildOut> {
    let timeout_ms = ToolError::arg_in(
        "timeout_ms",
        args.timeout_ms,
        DEFAULT_TIMEOUT_MS,
        1..=MAX_TIMEOUT_MS,
        "timeout_ms must be 1-1800000",
    )?;
    let (project, real) = pick_project(&state, args.project.as_ref())?;
    let dotnet = sdk()?;
    run_build(&state, &dotnet, project, &real, timeout_ms).await
}
