/**
 * Images for a vision-capable model (OPENAI_VISION): the current turn's image attachments are
 * re-read from the stored originals (`MessageRaw`) by the bounded parse worker, and each PNG, JPEG,
 * GIF or WebP (told by its magic bytes, never by its name) of at most `maxBytes` is passed, at most
 * `maxImages` of them, newest email first. An image not passed is named with the reason. Never throws.
 */
import { attachmentKind, formatBytes, imageMediaType } from '../mail/attachments.ts';
import type { TurnImages } from '../llm/provider.ts';
import type { Logger } from '../logger.ts';
import type { Db } from '../store/database.ts';
import { loadRawMessages } from '../store/turns.ts';
import type { MessageReader } from './parse-pool.ts';

export interface VisionSettings {
  /** OPENAI_VISION_MAX_IMAGES */
  maxImages: number;
  /** OPENAI_VISION_MAX_BYTES */
  maxBytes: number;
}

/** At most this many attachments per message are looked at for images. */
const MAX_PARTS_LOOKED_AT = 20;

export async function loadTurnImages(
  db: Db,
  reader: MessageReader,
  messages: ReadonlyArray<{ id: string }>,
  settings: VisionSettings,
  logger: Logger,
): Promise<TurnImages> {
  const images: TurnImages['images'] = [];
  const notShown: string[] = [];
  try {
    const raws = await loadRawMessages(
      db,
      messages.map((m) => m.id),
    );
    for (const message of [...messages].reverse()) {
      const raw = raws.get(message.id);
      if (!raw) continue;
      const read = await reader.read(raw, { maxFiles: MAX_PARTS_LOOKED_AT, maxBytes: settings.maxBytes, images: true });
      if (!read.parsed.ok) continue;
      const files = new Map((read.parsed.email.attachmentFiles ?? []).map((f) => [f.index, f.bytes]));
      for (const [index, info] of read.parsed.email.attachments.entries()) {
        const bytes = files.get(index) ?? null;
        const type = bytes ? imageMediaType(bytes) : null;
        const named = attachmentKind(info, bytes) === 'image';
        const name = info.filename ?? 'unnamed';
        if (!type) {
          if (!named) continue;
          if (info.size > settings.maxBytes)
            notShown.push(`${name}: larger than OPENAI_VISION_MAX_BYTES (${formatBytes(settings.maxBytes)})`);
          else notShown.push(`${name}: not a PNG, JPEG, GIF or WebP image`);
        } else if (images.length >= settings.maxImages) {
          notShown.push(`${name}: more than OPENAI_VISION_MAX_IMAGES (${settings.maxImages}) images`);
        } else {
          images.push({ name, dataUri: `data:${type};base64,${Buffer.from(bytes!).toString('base64')}` });
        }
      }
    }
  } catch (error) {
    logger.warn('images not read; named only', { error: error instanceof Error ? error.message : String(error) });
    return { images: [], notShown: [] };
  }
  return { images, notShown };
}
