// Every chart's PNG download, made in the browser from the chart's SVG file (the SVG link beside
// it): the file is loaded as an image from this origin (the Content-Security-Policy allows images
// from 'self' only, so no blob: or data: URL is drawn), painted on a canvas at twice its size, and
// saved with canvas.toBlob.  Without JavaScript the button stays hidden and the SVG link works.

const SCALE = 2;

function loadImage(url) {
  return new Promise((resolve, reject) => {
    const image = new Image();
    image.onload = () => resolve(image);
    image.onerror = () => reject(new Error(`the chart ${url} could not be loaded`));
    image.src = url;
  });
}

export async function chartPng(url) {
  const image = await loadImage(url);
  const canvas = document.createElement("canvas");
  canvas.width = Math.round(image.naturalWidth * SCALE);
  canvas.height = Math.round(image.naturalHeight * SCALE);
  const context = canvas.getContext("2d");
  context.fillStyle = "#ffffff";
  context.fillRect(0, 0, canvas.width, canvas.height);
  context.drawImage(image, 0, 0, canvas.width, canvas.height);
  return new Promise((resolve, reject) =>
    canvas.toBlob(blob => (blob ? resolve(blob) : reject(new Error("the PNG could not be made"))), "image/png"));
}

function save(blob, filename) {
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 60000);
}

export function initChartDownloads(root = document) {
  for (const button of root.querySelectorAll("button.chart-png[data-svg]")) {
    button.hidden = false;
    button.addEventListener("click", async () => {
      const status = button.parentElement.querySelector(".chart-png-status");
      button.disabled = true;
      try {
        save(await chartPng(button.dataset.svg), button.dataset.filename);
        if (status) status.textContent = "";
      } catch (error) {
        if (status) status.textContent = `${error.message}. Download the SVG instead.`;
      } finally {
        button.disabled = false;
      }
    });
  }
}
