//! The Pilotage reference engine over stdio: `cargo run -p pilotage-tests --bin reference-engine`.
//! See `pilotage_tests::engine`.

use rmcp::ServiceExt;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let service = pilotage_tests::engine::Engine::default()
        .serve(rmcp::transport::stdio())
        .await?;
    service.waiting().await?;
    Ok(())
}
