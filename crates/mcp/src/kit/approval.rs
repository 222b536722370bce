//! `requireApproval: mutating` through MCP elicitation: the client asks its human whether an
//! action may run, and only an explicit accept lets it through.

use std::collections::BTreeMap;
use std::time::Duration;

use deskpilot_engine::{Approval, Approver};
use rmcp::RoleServer;
use rmcp::model::{
    ClientResult, ElicitRequest, ElicitRequestParams, ElicitationAction, ElicitationSchema,
    ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions};

/// Makes `peer` the one who asks this session's human (on the current runtime).
pub(crate) fn install(session: &deskpilot_engine::Session, peer: Peer<RoleServer>) {
    session.set_approver(std::sync::Arc::new(ElicitationApprover {
        peer,
        runtime: tokio::runtime::Handle::current(),
    }));
}

/// Asks the connected client. Called on the engine's blocking threads.
pub(crate) struct ElicitationApprover {
    pub(crate) peer: Peer<RoleServer>,
    pub(crate) runtime: tokio::runtime::Handle,
}

impl Approver for ElicitationApprover {
    fn approve(&self, label: &str, timeout: Duration) -> Approval {
        let declared = self
            .peer
            .peer_info()
            .is_some_and(|info| info.capabilities.elicitation.is_some());
        if !declared {
            return Approval::Unavailable(
                "the MCP client did not declare the elicitation capability, so it cannot ask a human"
                    .to_string(),
            );
        }
        let mut schema = ElicitationSchema::new(BTreeMap::new());
        schema.title = Some("Allow this desktop action?".into());
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: format!(
                "deskpilot wants to {label}. Accept to allow this one action; decline to refuse it."
            ),
            requested_schema: schema,
        };
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
        let mut options = PeerRequestOptions::no_options();
        options.timeout = Some(timeout);
        let peer = self.peer.clone();
        let answer = self.runtime.block_on(async move {
            // A request that cannot even be sent (a stateless protocol, a closed client) means
            // nobody can be asked; one sent but not answered in time is a "no".
            let pending = match peer.send_request_with_option(request, options).await {
                Ok(p) => p,
                Err(e) => {
                    return Err(Approval::Unavailable(format!(
                        "the question could not be sent: {e}"
                    )));
                }
            };
            pending.await_response().await.map_err(|e| {
                Approval::Declined(format!("no answer within {} s ({e})", timeout.as_secs()))
            })
        });
        match answer {
            Err(outcome) => outcome,
            Ok(ClientResult::ElicitResult(r)) => match r.action {
                ElicitationAction::Accept => Approval::Accepted,
                ElicitationAction::Decline => Approval::Declined("declined".to_string()),
                ElicitationAction::Cancel => Approval::Declined("cancelled".to_string()),
                other => Approval::Declined(format!("{other:?}")),
            },
            Ok(other) => Approval::Declined(format!("unexpected answer {other:?}")),
        }
    }
}
