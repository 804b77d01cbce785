//! Signal commands: connect and disconnect a persistent connection between two nodes of
//! the edited scene, each one undo action.

use godot::prelude::*;
use godot_mcp_editor_core::command::Command;
use godot_mcp_protocol::ErrorCode;
use godot_mcp_protocol::commands as wire;
use serde_json::json;

use super::ctx::{
    Res, begin, err, failed, find, misrouted, obj, scene_root, undo_redo, with_verdict,
};

pub(crate) fn run(cmd: Command) -> Res {
    match cmd {
        Command::SignalConnect(c) => signal_edit(true, &c),
        Command::SignalDisconnect(c) => signal_edit(false, &c),
        _ => Err(misrouted("signal")),
    }
}

fn signal_edit(connect: bool, c: &wire::Connection) -> Res {
    let (from, signal, to, method) = (&c.from, c.signal.as_str(), &c.to, c.method.as_str());
    let root = scene_root()?;
    let f = find(&root, from)?;
    let t = find(&root, to)?;
    if !f.has_signal(signal) {
        return Err(failed(format!(
            "{from} ({}) has no signal {signal}",
            f.get_class()
        )));
    }
    let callable = Callable::from_object_method(&t, method);
    let connected = f.is_connected(signal, &callable);
    if connect && connected {
        return Err(failed(format!(
            "{from}.{signal} is already connected to {to}.{method}"
        )));
    }
    if !connect && !connected {
        return Err(err(
            ErrorCode::NotFound,
            format!("{from}.{signal} is not connected to {to}.{method}"),
        ));
    }
    // CONNECT_PERSIST (2): saved with the scene, as the editor's own Connect dialog does.
    let persist = 2i64.to_variant();
    let mut ur = undo_redo()?;
    let verb = if connect { "connect" } else { "disconnect" };
    begin(
        &mut ur,
        &root,
        &format!("MCP: {verb} {from}.{signal} -> {to}.{method}"),
    );
    let args_connect = [
        GString::from(signal).to_variant(),
        callable.to_variant(),
        persist,
    ];
    let args_disconnect = [GString::from(signal).to_variant(), callable.to_variant()];
    if connect {
        ur.add_do_method(&obj(&f), "connect", &args_connect);
        ur.add_undo_method(&obj(&f), "disconnect", &args_disconnect);
    } else {
        ur.add_do_method(&obj(&f), "disconnect", &args_disconnect);
        ur.add_undo_method(&obj(&f), "connect", &args_connect);
    }
    ur.commit_action();
    Ok(with_verdict(
        &root,
        &f,
        json!({"from": from, "signal": signal, "to": to, "method": method}),
    ))
}
