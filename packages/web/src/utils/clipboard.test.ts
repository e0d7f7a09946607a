import { afterEach, describe, expect, it, vi } from 'vitest';
import { copyToClipboard } from './clipboard';

function stubClipboard(
  writeText: ReturnType<typeof vi.fn>,
  query = vi.fn().mockResolvedValue({ state: 'granted' }),
) {
  vi.stubGlobal('navigator', { ...navigator, clipboard: { writeText }, permissions: { query } });
  return query;
}

describe('copyToClipboard', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('copies at the first attempt without asking', async () => {
    const writeText = vi.fn().mockResolvedValue(undefined);
    const query = stubClipboard(writeText);
    await copyToClipboard('https://x/share/a');
    expect(writeText).toHaveBeenCalledTimes(1);
    expect(query).not.toHaveBeenCalled();
  });

  it('asks for the clipboard permission and retries once after a refusal', async () => {
    const writeText = vi.fn().mockRejectedValueOnce(new Error('denied')).mockResolvedValueOnce(undefined);
    const query = stubClipboard(writeText);
    await copyToClipboard('https://x/share/a');
    expect(query).toHaveBeenCalledWith({ name: 'clipboard-write' });
    expect(writeText).toHaveBeenCalledTimes(2);
  });

  it('gives up after the second refusal', async () => {
    const writeText = vi.fn().mockRejectedValue(new Error('denied'));
    stubClipboard(writeText, vi.fn().mockRejectedValue(new TypeError('unknown permission')));
    await expect(copyToClipboard('https://x/share/a')).rejects.toThrow('denied');
    expect(writeText).toHaveBeenCalledTimes(2);
  });
});
