// Renders the app icons in packages/web/public/img/icons from the logo. The PNGs are committed:
// run this again only when the logo changes (`node scripts/generate-icons.mjs`). The names are
// File Browser's, so a branding folder with its own img/icons replaces them one by one.
import { Buffer } from 'node:buffer';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';

const web = path.join(import.meta.dirname, '..', 'packages', 'web', 'public', 'img');
const out = path.join(web, 'icons');
const logo = await readFile(path.join(web, 'logo.svg'));

/** The logo at `size`, `inset` of it on each side left empty, over `background` (or transparent). */
async function render(size, inset, background) {
  const inner = Math.round(size * (1 - 2 * inset));
  const art = await sharp(logo, { density: 72 * Math.ceil((inner / 64) * 2) })
    .resize(inner, inner)
    .png()
    .toBuffer();
  return sharp({
    create: {
      width: size,
      height: size,
      channels: 4,
      background: background ?? { r: 0, g: 0, b: 0, alpha: 0 },
    },
  })
    .composite([{ input: art, gravity: 'center' }])
    .png({ compressionLevel: 9 })
    .toBuffer();
}

/** An .ico holding PNG images (every browser since 2007 reads them). */
function ico(images) {
  const header = Buffer.alloc(6 + 16 * images.length);
  header.writeUInt16LE(0, 0);
  header.writeUInt16LE(1, 2);
  header.writeUInt16LE(images.length, 4);
  let offset = header.length;
  images.forEach(({ size, png }, i) => {
    const entry = 6 + 16 * i;
    header.writeUInt8(size >= 256 ? 0 : size, entry);
    header.writeUInt8(size >= 256 ? 0 : size, entry + 1);
    header.writeUInt16LE(1, entry + 4);
    header.writeUInt16LE(32, entry + 6);
    header.writeUInt32LE(png.length, entry + 8);
    header.writeUInt32LE(offset, entry + 12);
    offset += png.length;
  });
  return Buffer.concat([header, ...images.map((image) => image.png)]);
}

const white = { r: 255, g: 255, b: 255, alpha: 1 };
await mkdir(out, { recursive: true });
await writeFile(path.join(out, 'android-chrome-192x192.png'), await render(192, 0.04));
await writeFile(path.join(out, 'android-chrome-512x512.png'), await render(512, 0.04));
// A maskable icon is cropped to as little as the circle of 80 % of its width: the logo stays inside.
await writeFile(path.join(out, 'maskable-512x512.png'), await render(512, 0.2, white));
// iOS paints transparency black, so the home-screen icon gets its own background.
await writeFile(path.join(out, 'apple-touch-icon.png'), await render(180, 0.1, white));
const small = await Promise.all([16, 32, 48].map(async (size) => ({ size, png: await render(size, 0) })));
await writeFile(path.join(out, 'favicon.ico'), ico(small));
