import type { Config } from '../config.ts';
import type { MailboxSettings } from '../mailboxes-file.ts';
import type { TurnSettings } from './handle-thread-turn.ts';

/** A turn's settings: the agent's, and the mailbox's own (address, name, reply mode, language); the primary mailbox by default. */
export function turnSettings(
  config: Config,
  messageIdSecret: string,
  supportAddress = config.supportAddress,
  tagVocabulary: Readonly<Record<string, string>> = {},
  mailbox: MailboxSettings = config.mailboxes[0]!,
): TurnSettings {
  return {
    supportAddress,
    supportName: mailbox.name,
    messageIdSecret,
    replyMode: mailbox.replyMode,
    language: mailbox.language,
    limits: {
      promptTokenBudget: config.memory.promptTokenBudget,
      summaryTokenCap: config.memory.summaryTokenCap,
      messageTokenCap: config.memory.messageTokenCap,
      bufferTokenCap: config.memory.bufferTokenCap,
      attachmentTokenCap: config.mail.attachmentTokenCap,
    },
    replyLimitPerHour: config.trust.replyLimitPerHour,
    replyLimitPerDay: config.trust.replyLimitPerDay,
    loop: { maxConsecutive: config.trust.loopMaxReplies, windowMs: config.trust.loopWindowMs },
    foldPlusAddresses: config.entity.foldPlusAddresses,
    extraFreeMailDomains: config.entity.extraFreeMailDomains,
    knowledge: { tokenCap: config.knowledge.tokenCap, passages: config.knowledge.passages },
    tagVocabulary,
    cc: { mode: config.reply.keepCc, max: config.reply.ccMax },
    staffAddresses: config.staffAddresses,
  };
}
