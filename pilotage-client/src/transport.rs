//! The client's transports, with a bound on the size of one answer that is never mistaken
//! for silence.
//!
//! rmcp's stdio transport drops a line longer than 16 MiB with a log line and keeps waiting,
//! so a 21 MB tool result looked like a server that never answered. Here:
//!
//! - **stdio**: the child's stdout is read through [`Metered`], which counts the bytes of the
//!   current line; past [`ClientOptions::max_result_bytes`](super::ClientOptions) it ends the
//!   stream with an error and trips an [`Oversize`] flag, so the pending request fails at once
//!   with [`ClientError::TooLarge`](super::ClientError) naming the limit. Below it, rmcp's
//!   line reader (with no limit of its own) parses the message as usual.
//! - **streamable HTTP**: rmcp's own bounds, set to the same limit (a JSON body over it fails
//!   with rmcp's "exceeded the maximum size", an SSE event over it ends the stream), through
//!   [`HttpClient`], which also notes a 401 or 403 for the authorization flows.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::Transport;
use rmcp::RoleClient;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::process::{Child, ChildStdin, ChildStdout};

/// Whether an answer went over the limit, shared by the reader that saw it and the requests
/// waiting for an answer.
#[derive(Debug)]
pub(crate) struct Oversize {
    limit: usize,
    tripped: AtomicBool,
    notify: tokio::sync::Notify,
}

impl Oversize {
    pub(crate) fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            limit,
            tripped: AtomicBool::new(false),
            notify: tokio::sync::Notify::new(),
        })
    }

    /// The limit, in bytes.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Whether an answer went over the limit.
    pub(crate) fn is_tripped(&self) -> bool {
        self.tripped.load(Ordering::SeqCst)
    }

    fn trip(&self) {
        self.tripped.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    /// Resolves once an answer has gone over the limit (at once if one has).
    pub(crate) async fn tripped(&self) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_tripped() {
                return;
            }
            notified.await;
        }
    }
}

/// A reader that ends the stream with an error once one line (one JSON-RPC message) grows past
/// the limit, after handing on every whole line before it.
pub(crate) struct Metered<R> {
    inner: R,
    /// Bytes of the current line so far.
    run: usize,
    oversize: Arc<Oversize>,
    failed: bool,
}

impl<R> Metered<R> {
    pub(crate) fn new(inner: R, oversize: Arc<Oversize>) -> Self {
        Self {
            inner,
            run: 0,
            oversize,
            failed: false,
        }
    }

    fn error(&self) -> std::io::Error {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a message from the server is larger than {} bytes", self.oversize.limit),
        )
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Metered<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        if self.failed {
            return Poll::Ready(Err(self.error()));
        }
        let before = buf.filled().len();
        match Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {}
            other => return other,
        }
        let limit = self.oversize.limit;
        let mut run = self.run;
        let mut whole = 0; // bytes of the new data up to and including its last newline
        let mut over = false;
        for (at, byte) in buf.filled()[before..].iter().enumerate() {
            if *byte == b'\n' {
                run = 0;
                whole = at + 1;
            } else {
                run += 1;
                if run > limit {
                    over = true;
                    break;
                }
            }
        }
        if !over {
            self.run = run;
            return Poll::Ready(Ok(()));
        }
        self.failed = true;
        self.oversize.trip();
        if whole == 0 {
            return Poll::Ready(Err(self.error()));
        }
        // Hand on the whole lines first; the next read reports the error.
        buf.set_filled(before + whole);
        Poll::Ready(Ok(()))
    }
}

/// A server started as a child process, spoken to over its stdin and stdout (read through
/// [`Metered`]); killed when dropped.
pub(crate) struct ChildStdio {
    child: Child,
    inner: AsyncRwTransport<RoleClient, Metered<ChildStdout>, ChildStdin>,
}

impl ChildStdio {
    /// Starts `command` (stdin and stdout piped, stderr inherited, killed on drop).
    pub(crate) fn spawn(mut command: tokio::process::Command, oversize: Arc<Oversize>) -> std::io::Result<Self> {
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .kill_on_drop(true);
        let mut child = command.spawn()?;
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(std::io::Error::other("the child's stdio was not piped"));
        };
        // The metered reader enforces the limit; rmcp's own (which drops a long line and keeps
        // waiting) is lifted.
        let inner =
            AsyncRwTransport::new_client(Metered::new(stdout, oversize), stdin).with_max_line_length(usize::MAX);
        Ok(Self { child, inner })
    }
}

impl Transport<RoleClient> for ChildStdio {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    fn receive(&mut self) -> impl std::future::Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.inner.receive()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let closed = self.inner.close().await;
        // The server ends when its stdin closes; one that does not within a second is killed.
        if tokio::time::timeout(std::time::Duration::from_secs(1), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
        closed
    }
}

/// What the server answered when it refused a request for want of authorization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refused {
    /// 401 or 403.
    pub(crate) status: u16,
    /// Its `WWW-Authenticate` header, if it sent one.
    pub(crate) www_authenticate: Option<String>,
}

/// The streamable HTTP client: rmcp's reqwest client (its same-origin redirect policy, its
/// bounds), which notes a 401 or 403 answer so that the connection can authorize and try again
/// (rmcp reports a challenged 401 as `AuthRequired`, an unchallenged one as an unexpected
/// response `HTTP 401 ...`). The token travels in the transport's `auth_header`.
#[derive(Clone)]
pub(crate) struct HttpClient {
    inner: reqwest::Client,
    refused: Arc<std::sync::Mutex<Option<Refused>>>,
}

type HttpError = rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>;
type HeaderMap = std::collections::HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>;

impl HttpClient {
    pub(crate) fn new() -> Result<Self, reqwest::Error> {
        let inner = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(reqwest::redirect::Policy::custom(|attempt| {
                // As rmcp's default client: only same-origin 307/308 (which keep the body).
                let keeps_body = matches!(
                    attempt.status(),
                    reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
                );
                let same_origin = attempt
                    .previous()
                    .first()
                    .is_some_and(|first| first.origin() == attempt.url().origin());
                if !keeps_body || !same_origin {
                    attempt.stop()
                } else if attempt.previous().len() > 10 {
                    attempt.error("more than 10 redirects")
                } else {
                    attempt.follow()
                }
            }))
            .build()?;
        Ok(Self {
            inner,
            refused: Arc::default(),
        })
    }

    /// The last refusal, taken.
    pub(crate) fn take_refused(&self) -> Option<Refused> {
        self.refused.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    fn note<T>(&self, result: &Result<T, HttpError>) {
        use rmcp::transport::streamable_http_client::StreamableHttpError as E;
        let refused = match result {
            Err(E::AuthRequired(e)) => Refused {
                status: 401,
                www_authenticate: Some(e.www_authenticate_header.clone()),
            },
            Err(E::InsufficientScope(e)) => Refused {
                status: 403,
                www_authenticate: Some(e.www_authenticate_header.clone()),
            },
            Err(E::UnexpectedServerResponse(text)) if text.starts_with("HTTP 401") => Refused {
                status: 401,
                www_authenticate: None,
            },
            Err(E::UnexpectedServerResponse(text)) if text.starts_with("HTTP 403") => Refused {
                status: 403,
                www_authenticate: None,
            },
            _ => return,
        };
        *self.refused.lock().unwrap_or_else(|e| e.into_inner()) = Some(refused);
    }
}

impl rmcp::transport::streamable_http_client::StreamableHttpClient for HttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: rmcp::model::ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HeaderMap,
    ) -> Result<rmcp::transport::streamable_http_client::StreamableHttpPostResponse, HttpError> {
        let result = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await;
        self.note(&result);
        result
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: rmcp::model::ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HeaderMap,
        max_sse_event_size: usize,
    ) -> Result<rmcp::transport::streamable_http_client::StreamableHttpPostResponse, HttpError> {
        let result = self
            .inner
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.note(&result);
        result
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: rmcp::model::ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HeaderMap,
        limits: rmcp::transport::streamable_http_client::StreamableHttpResponseLimits,
    ) -> Result<rmcp::transport::streamable_http_client::StreamableHttpPostResponse, HttpError> {
        let result = self
            .inner
            .post_message_with_response_limits(uri, message, session_id, auth_header, custom_headers, limits)
            .await;
        self.note(&result);
        result
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HeaderMap,
    ) -> Result<(), HttpError> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HeaderMap,
    ) -> Result<rmcp::transport::common::client_side_sse::BoxedSseResponse, HttpError> {
        let result = self
            .inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await;
        self.note(&result);
        result
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HeaderMap,
        max_sse_event_size: usize,
    ) -> Result<rmcp::transport::common::client_side_sse::BoxedSseResponse, HttpError> {
        let result = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.note(&result);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    async fn read_all(input: &'static [u8], limit: usize, chunk: usize) -> (Vec<u8>, Option<std::io::Error>, bool) {
        let oversize = Oversize::new(limit);
        let reader = tokio_test_reader(input, chunk);
        let mut metered = Metered::new(reader, oversize.clone());
        let mut out = Vec::new();
        let mut buf = vec![0; 64];
        loop {
            match metered.read(&mut buf).await {
                Ok(0) => return (out, None, oversize.is_tripped()),
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) => return (out, Some(e), oversize.is_tripped()),
            }
        }
    }

    /// A reader that hands out `input` `chunk` bytes at a time.
    fn tokio_test_reader(input: &'static [u8], chunk: usize) -> impl AsyncRead + Unpin {
        struct Chunks(&'static [u8], usize);
        impl AsyncRead for Chunks {
            fn poll_read(
                mut self: Pin<&mut Self>,
                _: &mut Context<'_>,
                buf: &mut ReadBuf<'_>,
            ) -> Poll<std::io::Result<()>> {
                let n = self.1.min(self.0.len()).min(buf.remaining());
                buf.put_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Poll::Ready(Ok(()))
            }
        }
        Chunks(input, chunk)
    }

    #[tokio::test]
    async fn lines_within_the_limit_pass_whatever_the_chunks() {
        for chunk in [1, 3, 64] {
            let (out, error, tripped) = read_all(b"12345\n123\n12345\n", 5, chunk).await;
            assert_eq!(out, b"12345\n123\n12345\n");
            assert!(error.is_none() && !tripped);
        }
    }

    #[tokio::test]
    async fn a_longer_line_ends_the_stream_after_the_whole_lines_before_it() {
        for chunk in [1, 4, 64] {
            let (out, error, tripped) = read_all(b"1234\n123456\nnever\n", 5, chunk).await;
            // The whole line before it arrives whole; of the long line, at most the bytes
            // up to the limit (the reader above discards a line that never ends).
            assert!(
                out.starts_with(b"1234\n") && out.len() <= b"1234\n12345".len(),
                "chunk {chunk}: {out:?}"
            );
            assert!(!out.windows(6).any(|w| w == b"123456"), "chunk {chunk}");
            let error = error.expect("an error, not the end of the stream");
            assert!(error.to_string().contains("larger than 5 bytes"), "{error}");
            assert!(tripped);
        }
    }

    #[tokio::test]
    async fn waiters_learn_of_the_trip_even_when_it_came_first() {
        let oversize = Oversize::new(1);
        oversize.trip();
        tokio::time::timeout(std::time::Duration::from_secs(1), oversize.tripped())
            .await
            .expect("already tripped");
        let later = Oversize::new(1);
        let waiter = tokio::spawn({
            let later = later.clone();
            async move { later.tripped().await }
        });
        tokio::task::yield_now().await;
        later.trip();
        tokio::time::timeout(std::time::Duration::from_secs(1), waiter)
            .await
            .expect("woken")
            .unwrap();
    }
}
