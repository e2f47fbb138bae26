// Every dashboard page: the copy button of the survey address, where the focus goes on load
// (the error summary after a failed save, so it is read first; it is also the first thing seen),
// and the charts' PNG downloads (chart-download.js).

import { initChartDownloads } from "./chart-download.js";

function initCopy() {
  const button = document.getElementById("copy-url");
  if (!button) return;
  const input = document.querySelector(button.dataset.copy);
  const status = document.getElementById("copy-status");
  button.addEventListener("click", async () => {
    input.select();
    let copied = false;
    try {
      await navigator.clipboard.writeText(input.value);
      copied = true;
    } catch (error) {
      copied = document.execCommand && document.execCommand("copy");
    }
    status.textContent = copied ? "Address copied." : "Select the address and copy it (Ctrl+C or ⌘C).";
    button.textContent = copied ? button.dataset.copied : button.textContent;
  });
}

function initFocus() {
  const summary = document.getElementById("error-summary");
  if (summary) {
    summary.focus();
    return;
  }
}

initCopy();
initFocus();
initChartDownloads();
