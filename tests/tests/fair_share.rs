//! Issue #31 in-process: a requester's bounded work (at most `max_executes_per_identity`
//! executes in flight, then `bounds_exceeded`, another requester still served) and the run
//! store's fair share seen through the engine (one session's flood keeps another's runs).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use pilotage_server::prelude::*;
use serde_json::{json, Value};
use tokio::sync::Semaphore;

/// A Language whose runs wait for a permit when `{"wait": true}`, counting the waiting runs
/// it has entered (a run reaches the Language only once it holds its requester's slot).
struct Gate {
    permits: Arc<Semaphore>,
    entered: Arc<AtomicUsize>,
}

#[derive(serde::Deserialize)]
struct Program {
    #[serde(default)]
    wait: bool,
}

impl Language for Gate {
    type Program = Program;

    fn declaration(&self) -> Declaration {
        Declaration::new("gate/v1", "Runs that wait").with_destructive(false)
    }

    async fn validate(&self, _: &Program, _: Option<&Value>, _: &StageContext) -> Validated {
        Validated::valid()
    }

    async fn execute(&self, run: ExecuteInput<Program>, _: &StageContext) -> Result<Ran, RequestError> {
        if run.program.wait {
            self.entered.fetch_add(1, Ordering::SeqCst);
            let _permit = self
                .permits
                .acquire()
                .await
                .map_err(|_| RequestError::internal("closed"))?;
        }
        Ok(Ran::success(json!({"done": true}), []))
    }
}

fn structured(result: Option<Result<rmcp::model::CallToolResult, rmcp::model::ErrorData>>) -> (bool, Value) {
    let result = result.expect("a Pilotage tool").expect("not a carrier error");
    (
        result.is_error.unwrap_or(false),
        result.structured_content.unwrap_or(Value::Null),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_requester_at_its_bound_is_refused_and_another_is_served() {
    let permits = Arc::new(Semaphore::new(0));
    let entered = Arc::new(AtomicUsize::new(0));
    let engine = Engine::builder("gate", "1")
        .language(Gate {
            permits: permits.clone(),
            entered: entered.clone(),
        })
        .max_executes_per_identity(3)
        .build()
        .unwrap();
    let waiting: Vec<_> = (0..3)
        .map(|_| {
            let engine = engine.clone();
            tokio::spawn(async move {
                structured(
                    engine
                        .call("gate_v1_execute", &json!({"program": {"wait": true}}), "session:flood")
                        .await,
                )
            })
        })
        .collect();
    // Until the three hold their slots and wait in the Language. This must not be probed with
    // executes of the same requester: a probe holds a slot while it runs, and a spawned call
    // that starts late (a loaded CI machine) is then refused and never waits (the flake of
    // cf757f7 and df25464, where no probe was ever refused).
    for _ in 0..1000 {
        if entered.load(Ordering::SeqCst) == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        entered.load(Ordering::SeqCst),
        3,
        "the three waiting executes are in flight within 10 s"
    );
    let (is_error, refused) = structured(
        engine
            .call("gate_v1_execute", &json!({"program": {}}), "session:flood")
            .await,
    );
    assert!(is_error, "the fourth execute of one requester is refused: {refused:#}");
    assert_eq!(refused["error"]["kind"], "bounds_exceeded", "{refused:#}");
    assert!(refused["error"]["message"]
        .as_str()
        .unwrap()
        .contains("max_executes_per_identity"));
    let (is_error, content) = structured(
        engine
            .call("gate_v1_execute", &json!({"program": {}}), "session:other")
            .await,
    );
    assert!(
        !is_error && content["outcome"]["ok"] == true,
        "another requester is served: {content:#}"
    );
    permits.add_permits(3);
    for task in waiting {
        let (is_error, content) = task.await.unwrap();
        assert!(!is_error && content["outcome"]["ok"] == true, "{content:#}");
    }
    // The slots are given back: the requester is served again.
    let (is_error, _) = structured(
        engine
            .call("gate_v1_execute", &json!({"program": {}}), "session:flood")
            .await,
    );
    assert!(!is_error);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_sessions_flood_keeps_another_sessions_runs() {
    let engine = Engine::builder("gate", "1")
        .language(Gate {
            permits: Arc::new(Semaphore::new(0)),
            entered: Arc::default(),
        })
        .store_limits(StoreLimits::new(50, 1 << 24))
        .build()
        .unwrap();
    let mut kept = Vec::new();
    for _ in 0..3 {
        let (_, content) = structured(
            engine
                .call("gate_v1_execute", &json!({"program": {}}), "session:a")
                .await,
        );
        kept.push(content["run_id"].as_str().unwrap().to_owned());
    }
    for _ in 0..100 {
        structured(
            engine
                .call("gate_v1_execute", &json!({"program": {}}), "session:b")
                .await,
        );
    }
    for run_id in &kept {
        let (is_error, content) = structured(
            engine
                .call("gate_v1_trace", &json!({"run_id": run_id}), "session:a")
                .await,
        );
        assert!(
            !is_error,
            "session a's run {run_id} survives session b's flood: {content:#}"
        );
    }
    let sizes = engine.runs().sizes().await.unwrap();
    assert!(sizes.runs <= 50, "the store-wide bound holds: {sizes:?}");
}
