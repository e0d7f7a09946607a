/**
 * Lets the browser download an address itself (authenticated by the auth cookie), so that a
 * large file or archive streams to disk instead of passing through the page's memory.
 */
export function triggerDownload(url: string): void {
  const link = document.createElement('a');
  link.href = url;
  // Same-origin: the server's Content-Disposition names the file.
  link.download = '';
  link.rel = 'noopener';
  link.style.display = 'none';
  document.body.appendChild(link);
  link.click();
  link.remove();
}
