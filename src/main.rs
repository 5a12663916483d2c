//! The server binary: settings, telemetry, start. Nothing else lives here.

use std::process::ExitCode;

use domino_server::settings::Settings;
use domino_server::startup::Application;
use domino_server::telemetry;

// A move allocates many short-lived buffers (the record, the view, its JSON) across two
// worker threads; mimalloc serves them markedly faster than glibc's malloc.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Until telemetry is up, stderr is the only place an error can go.
    let settings = match Settings::from_env() {
        Ok(settings) => settings,
        Err(e) => {
            eprintln!("domino-server: cannot start: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = telemetry::init(settings.log_format, &settings.log_filter, std::io::stdout) {
        eprintln!("domino-server: cannot start: {e}");
        return ExitCode::from(2);
    }

    let outcome = actix_web::rt::System::new().block_on(async move {
        match Application::build(settings).await {
            Ok(app) => app.run_until_stopped().await.map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        }
    });
    match outcome {
        Ok(()) => {
            tracing::info!("stopped");
            ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::error!(error = %e, "cannot start or keep serving");
            ExitCode::FAILURE
        }
    }
}
