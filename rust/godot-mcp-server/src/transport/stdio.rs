//! The stdio transport: rmcp's newline-delimited JSON-RPC over the standard streams.
//!
//! - When stdin and stdout are pipes (how MCP clients start a server) they are read
//!   and written on the runtime's reactor (`rmcp::transport::stdio_pipes`), so a
//!   message costs no hand-off to and from tokio's blocking pool; anything else (a
//!   terminal, a file) falls back to the blocking handles.
//! - tools/list is written from the published tool list (`crate::tool_list`) as it
//!   is: the handler answers with one stand-in tool naming a list it registered here,
//!   and [`ToolsWriter`] puts that list's entries in the stand-in's place on the way
//!   out. No tool's schemas are built as JSON values to answer it; the bytes are the
//!   ones rmcp would write for the parsed tools (`tool_list`'s tests).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use tokio::io::AsyncWrite;

use crate::server::raw_tools::RawToolLists;

/// Standard output for rmcp's line writer: whole lines are passed on at each flush
/// (rmcp flushes after every message), a tools/list stand-in replaced by its list.
#[derive(Debug)]
pub(crate) struct ToolsWriter<W> {
    inner: W,
    lists: Arc<RawToolLists>,
    /// Accepted from rmcp, not yet passed on.
    taken: Vec<u8>,
    /// Being written to `inner`, from `written` on.
    out: Vec<u8>,
    written: usize,
}

impl<W> ToolsWriter<W> {
    pub(crate) fn new(inner: W, lists: Arc<RawToolLists>) -> Self {
        Self {
            inner,
            lists,
            taken: Vec::new(),
            out: Vec::new(),
            written: 0,
        }
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for ToolsWriter<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.taken.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.written < this.out.len() {
                let n =
                    ready!(Pin::new(&mut this.inner).poll_write(cx, &this.out[this.written..]))?;
                if n == 0 {
                    return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
                }
                this.written += n;
                continue;
            }
            this.out.clear();
            this.written = 0;
            let Some(last) = this.taken.iter().rposition(|b| *b == b'\n') else {
                break;
            };
            let rest = this.taken.split_off(last + 1);
            let lines = std::mem::replace(&mut this.taken, rest);
            this.out = this.lists.splice(lines);
        }
        // A tools/list answer's buffer is not kept for the whole session.
        if this.out.capacity() > 64 * 1024 {
            this.out = Vec::new();
        }
        if this.taken.capacity() > 64 * 1024 {
            this.taken.shrink_to(4096);
        }
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.as_mut().poll_flush(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The stdio transport for a handler made `with_raw_tools(lists)`. Must be called
/// inside the runtime (the pipes register with its reactor).
pub(crate) fn transport(
    lists: Arc<RawToolLists>,
) -> (
    rmcp::transport::StdioReader,
    ToolsWriter<rmcp::transport::StdioWriter>,
) {
    let (reader, writer) = rmcp::transport::stdio_pipes();
    (reader, ToolsWriter::new(writer, lists))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::Tool;
    use rmcp::model::{ListToolsResult, NumberOrString, ServerJsonRpcMessage, ServerResult};
    use tokio::io::AsyncWriteExt;

    /// A tools/list answer holding `tool`, as rmcp writes it on stdio.
    fn line_of(tool: &Tool) -> Vec<u8> {
        let mut result = ListToolsResult::with_all_items(vec![tool.clone()]);
        result.ttl_ms = Some(5);
        let msg = ServerJsonRpcMessage::response(
            ServerResult::ListToolsResult(result),
            NumberOrString::Number(2),
        );
        let mut line = serde_json::to_vec(&msg).unwrap();
        line.push(b'\n');
        line
    }

    /// `line` with `tool`'s own text replaced by `members`.
    fn replaced(line: &[u8], tool: &Tool, members: &str) -> String {
        let text = String::from_utf8(line.to_vec()).unwrap();
        let own = serde_json::to_string(tool).unwrap();
        assert_eq!(text.matches(&own).count(), 1, "{text}");
        text.trim_end().replace(&own, members)
    }

    /// The stand-in becomes the registered members, once; other lines pass as they are.
    #[tokio::test]
    async fn the_stand_in_becomes_its_list() {
        let lists = Arc::new(RawToolLists::default());
        let members = r#"{"name":"a","inputSchema":{}},{"name":"b","inputSchema":{}}"#;
        let stand_in = lists.stand_in(members.into());
        let line = line_of(&stand_in);
        let mut out = Vec::new();
        let mut w = ToolsWriter::new(&mut out, lists.clone());
        w.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n")
            .await
            .unwrap();
        // In two pieces, as a framed writer may pass them.
        w.write_all(&line[..10]).await.unwrap();
        w.write_all(&line[10..]).await.unwrap();
        w.flush().await.unwrap();
        // Seen once: the same stand-in again is no longer replaced.
        w.write_all(&line).await.unwrap();
        w.flush().await.unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], r#"{"jsonrpc":"2.0","method":"x"}"#);
        assert_eq!(lines[1], replaced(&line, &stand_in, members));
        let answer: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
        assert_eq!(answer["result"]["tools"][1]["name"], "b");
        assert_eq!(lines[2].as_bytes(), &line[..line.len() - 1]);
        // Each line once: what was written is not written again at the next flush.
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lists.pending.lock().is_empty());
    }

    /// An empty list is an empty array; a name that only looks like a stand-in (a
    /// guessed nonce) is left alone.
    #[tokio::test]
    async fn only_a_registered_stand_in_is_replaced() {
        let lists = Arc::new(RawToolLists::default());
        let stand_in = lists.stand_in(String::new());
        let forged = Tool::new_with_raw(
            format!("{}7", &lists.prefix()[9..]),
            None,
            Arc::new(Default::default()),
        );
        let mut out = Vec::new();
        let mut w = ToolsWriter::new(&mut out, lists.clone());
        w.write_all(&line_of(&forged)).await.unwrap();
        w.write_all(&line_of(&stand_in)).await.unwrap();
        w.flush().await.unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0].as_bytes(), line_of(&forged).trim_ascii_end());
        assert_eq!(lines[1], replaced(&line_of(&stand_in), &stand_in, ""));
        assert!(lines[1].contains(r#""tools":[]"#), "{}", lines[1]);
        assert_eq!(lines.len(), 2, "{text}");
    }
}
