#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    // Test builds only (feature `failpoints`): FAILPOINTS stops the server at a journal
    // boundary for the crash tests. Release builds have no such hook.
    #[cfg(feature = "failpoints")]
    let _failpoints = fail::FailScenario::setup();
    godot_mcp_server::main()
}
