//! Browser entry point: install the panic hook, mount the root component. Everything
//! else lives in the library.

fn main() {
    idempotency_lab::crash::install();
    leptos::mount::mount_to_body(idempotency_lab::app::App);
}
