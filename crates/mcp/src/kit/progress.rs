//! `notifications/progress` for long calls, when the request carries a progress token.

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;

/// How often a long wait reports progress.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// Awaits `work`, sending `notifications/progress` every second when the caller asked for
/// progress (a `progressToken` in the request's `_meta`): elapsed and total milliseconds.
pub(crate) async fn with_progress<T>(
    context: &RequestContext<RoleServer>,
    total: Duration,
    what: &str,
    work: impl Future<Output = T>,
) -> T {
    let Some(token) = context.meta.get_progress_token() else {
        return work.await;
    };
    let started = std::time::Instant::now();
    tokio::pin!(work);
    let mut tick =
        tokio::time::interval_at(tokio::time::Instant::now() + PROGRESS_EVERY, PROGRESS_EVERY);
    loop {
        tokio::select! {
            done = &mut work => return done,
            _ = tick.tick() => {
                let elapsed = started.elapsed().min(total);
                let note = ProgressNotificationParam::new(token.clone(), elapsed.as_millis() as f64)
                    .with_total(total.as_millis() as f64)
                    .with_message(format!("{what}: {} of {} ms", elapsed.as_millis(), total.as_millis()));
                if let Err(e) = context.peer.notify_progress(note).await {
                    tracing::debug!("progress notification not sent: {e}");
                }
            }
        }
    }
}
