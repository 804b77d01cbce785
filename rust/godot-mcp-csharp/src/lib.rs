//! C# in Godot projects, without the .NET SDK: the scripts read with a real C# parser
//! (tree-sitter and its C# grammar) by the rules of Godot's own source generators
//! ([`script`]), the .NET project Godot makes ([`project`]), and MSBuild's diagnostics
//! in their documented canonical form ([`msbuild`]). `types` maps a C# type to the
//! Godot type it marshals to.
//!
//! Only the server links this crate: the editor add-on never carries a C parser.

#![warn(unreachable_pub)]
pub mod msbuild;
pub mod project;
pub mod script;
mod types;

pub use msbuild::{Diagnostic, parse_diagnostics};
pub use project::{DotnetProject, Solution, csproj_info, sln_info};
pub use script::{CsClass, CsExport, CsFile, CsSignal, GeneratorDiagnostic, read_cs, script_class};
pub use types::{VariantType, variant_of};
