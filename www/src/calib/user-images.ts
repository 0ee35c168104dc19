// The user's own calibration images (browser only): decoded with createImageBitmap and drawn onto an
// OffscreenCanvas at the model's input size (stretched), as RGBA for doc-pages.js toTensor.

export interface UserImage { rgba: Uint8ClampedArray; w: number; h: number; name: string }

export async function loadUserImages(files: File[], [h, w]: [number, number]): Promise<UserImage[]> {
  const out: UserImage[] = [];
  for (const f of files) {
    const bmp = await createImageBitmap(f);
    const canvas = new OffscreenCanvas(w, h);
    const ctx = canvas.getContext('2d')!;
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, w, h);
    ctx.drawImage(bmp, 0, 0, w, h);
    bmp.close();
    out.push({ rgba: ctx.getImageData(0, 0, w, h).data, w, h, name: f.name });
  }
  return out;
}
