//! The smallest Leptos app worth timing: a button that counts its clicks.
//! `data-testid="app-ready"` is there once it has mounted, as on the lesson.

use leptos::prelude::*;

#[component]
fn Counter() -> impl IntoView {
    let (count, set_count) = signal(0u32);
    view! {
        <button data-testid="app-ready" on:click=move |_| set_count.update(|n| *n += 1)>
            {count}
        </button>
    }
}

fn main() {
    leptos::mount::mount_to_body(Counter);
}
