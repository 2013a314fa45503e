import type { Config } from '../config.ts';
import type { TurnSettings } from './handle-thread-turn.ts';

export function turnSettings(
  config: Config,
  messageIdSecret: string,
  supportAddress = config.supportAddress,
  tagVocabulary: Readonly<Record<string, string>> = {},
): TurnSettings {
  return {
    supportAddress,
    supportName: config.supportName,
    messageIdSecret,
    replyMode: config.replyMode,
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
