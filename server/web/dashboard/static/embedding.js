// The "Use in another survey tool" page (templates/dashboard/embed.html): each box's copy button.

for (const button of document.querySelectorAll("button[data-copy]")) {
  const box = document.querySelector(button.dataset.copy);
  const status = document.querySelector(button.dataset.status);
  button.addEventListener("click", async () => {
    box.select();
    let copied = false;
    try {
      await navigator.clipboard.writeText(box.value);
      copied = true;
    } catch (error) {
      copied = Boolean(document.execCommand && document.execCommand("copy"));
    }
    status.textContent = copied ? "Copied." : "Select the text and copy it (Ctrl+C or ⌘C).";
  });
}
