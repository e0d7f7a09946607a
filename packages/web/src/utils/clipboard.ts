/** Plain-HTTP pages (common on a LAN) have no Clipboard API; a selected text area still copies. */
function copyWithSelection(text: string): void {
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.appendChild(area);
  area.select();
  const copied = document.execCommand('copy');
  area.remove();
  if (!copied) throw new Error('The browser refused to copy to the clipboard.');
}

/**
 * Copies text to the clipboard. Some browsers refuse the first attempt until the permission is
 * queried, so the copy is retried once after asking.
 */
export async function copyToClipboard(text: string): Promise<void> {
  if (!navigator.clipboard) {
    copyWithSelection(text);
    return;
  }
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    try {
      await navigator.permissions?.query({ name: 'clipboard-write' as PermissionName });
    } catch {
      // Browsers that do not know this permission still deserve a second attempt.
    }
    await navigator.clipboard.writeText(text);
  }
}
