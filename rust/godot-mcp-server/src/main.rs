#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    godot_mcp_server::cli::main()
}
