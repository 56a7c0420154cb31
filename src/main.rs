//! Browser entry point: install the panic hook, mount the app into the prerendered
//! page. Everything else lives in the library.

fn main() {
    idempotency_lab::crash::install();
    idempotency_lab::app::mount();
}
