import { describe, expect, it } from 'vitest';
import { attributionStrength, splitSameLineAttribution } from '../../src/mail/attribution.ts';
import { dashSignatureStart, isListFooterStart, isMobileFooter } from '../../src/mail/footers.ts';
import { headerBlockAt, isForwardSubject, separatorKind } from '../../src/mail/header-block.ts';
import { extractReplyText } from '../../src/mail/reply-text.ts';

interface Case {
  name: string;
  text?: string | null;
  html?: string | null;
  expected: string;
}

function runCases(cases: Case[]): void {
  it.each(cases)('$name', ({ text, html, expected }) => {
    expect(extractReplyText({ text: text ?? null, html: html ?? null })).toBe(expected);
  });
}

const lines = (...parts: string[]): string => parts.join('\n');

// ---------------------------------------------------------------------------------------------
// Realistic client samples (trimmed to the relevant structure, markup as the clients emit it)
// ---------------------------------------------------------------------------------------------

const GMAIL_HTML =
  '<div dir="ltr">Thanks, that fixed it!<div><br></div><div>One more question: can I get the invoice as PDF?</div>' +
  '<div><br></div><div>Jane</div></div><br><div class="gmail_quote gmail_quote_container">' +
  '<div dir="ltr" class="gmail_attr">On Tue, Mar 4, 2025 at 10:15\u202FAM Acme Support &lt;' +
  '<a href="mailto:support@acme.com">support@acme.com</a>&gt; wrote:<br></div>' +
  '<blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex;border-left:1px solid rgb(204,204,204);padding-left:1ex">' +
  '<div dir="ltr">Hi Jane,<div><br></div><div>Please clear your cache.</div></div></blockquote></div>';

const GMAIL_TEXT = lines(
  'Thanks, that fixed it!',
  '',
  'One more question: can I get the invoice as PDF?',
  '',
  'Jane',
  '',
  'On Tue, Mar 4, 2025 at 10:15\u202FAM Acme Support <support@acme.com> wrote:',
  '',
  '> Hi Jane,',
  '>',
  '> Please clear your cache.',
  '>',
  '',
);

const GMAIL_EXPECTED = 'Thanks, that fixed it!\n\nOne more question: can I get the invoice as PDF?\n\nJane';

const GMAIL_OLD_HTML =
  '<div dir="ltr">Still broken.</div><div class="gmail_extra"><br><div class="gmail_quote">' +
  'On Mon, Jan 8, 2018 at 9:00 AM, Acme &lt;support@acme.com&gt; wrote:<br>' +
  '<blockquote class="gmail_quote" style="margin:0 0 0 .8ex;border-left:1px #ccc solid;padding-left:1ex">Fixed?</blockquote></div></div>';

const GMAIL_SIGNATURE_HTML =
  '<div dir="ltr">Please send the contract again.<br clear="all"><div><br></div>' +
  '<span class="gmail_signature_prefix">-- </span><br><div dir="ltr" class="gmail_signature" data-smartmail="gmail_signature">' +
  '<div dir="ltr">Jane Doe<br>Head of Ops, Example Ltd<br>+1 555 0100</div></div></div>';

const OUTLOOK_DESKTOP_HTML =
  '<html xmlns:o="urn:schemas-microsoft-com:office:office"><head><meta http-equiv="Content-Type" content="text/html; charset=utf-8">' +
  '<style><!-- p.MsoNormal {margin:0cm; font-size:11.0pt;} --></style>' +
  '<!--[if gte mso 9]><xml><o:shapedefaults v:ext="edit" spidmax="1026" /></xml><![endif]--></head>' +
  '<body lang="EN-US" link="#0563C1"><div class="WordSection1">' +
  '<p class="MsoNormal">Hi team,<o:p></o:p></p><p class="MsoNormal"><o:p>&nbsp;</o:p></p>' +
  '<p class="MsoNormal">The export still fails with error 500.<o:p></o:p></p><p class="MsoNormal"><o:p>&nbsp;</o:p></p>' +
  '<p class="MsoNormal">Regards,<o:p></o:p></p><p class="MsoNormal">Jane<o:p></o:p></p><p class="MsoNormal"><o:p>&nbsp;</o:p></p>' +
  '<div><div style="border:none;border-top:solid #E1E1E1 1.0pt;padding:3.0pt 0cm 0cm 0cm">' +
  '<p class="MsoNormal"><b>From:</b> Acme Support &lt;support@acme.com&gt; <br><b>Sent:</b> Tuesday, March 4, 2025 10:15 AM<br>' +
  '<b>To:</b> Jane Doe &lt;jane@example.com&gt;<br><b>Subject:</b> RE: Export<o:p></o:p></p></div></div>' +
  '<p class="MsoNormal"><o:p>&nbsp;</o:p></p><p class="MsoNormal">Hi Jane, please retry the export.<o:p></o:p></p>' +
  '</div></body></html>';

const OUTLOOK_DESKTOP_GERMAN_HTML =
  '<div class="WordSection1"><p class="MsoNormal">Hallo,<o:p></o:p></p><p class="MsoNormal">die Rechnung stimmt nicht.<o:p></o:p></p>' +
  '<div style="border:none;border-top:solid #E1E1E1 1.0pt;padding:3.0pt 0cm 0cm 0cm"><p class="MsoNormal">' +
  '<b>Von:</b> Acme Support &lt;support@acme.com&gt;<br><b>Gesendet:</b> Dienstag, 4. März 2025 10:15<br>' +
  '<b>An:</b> Klaus Müller &lt;klaus@example.de&gt;<br><b>Betreff:</b> AW: Rechnung</p></div>' +
  '<p class="MsoNormal">Hallo Klaus,</p></div>';

const OUTLOOK_WEB_HTML =
  '<div class="elementToProof" style="font-family: Aptos, sans-serif; font-size: 12pt;">Yes, order 4411 is the right one.</div>' +
  '<div class="elementToProof" style="font-family: Aptos, sans-serif; font-size: 12pt;"><br></div>' +
  '<div id="appendonsend"></div><hr style="display:inline-block;width:98%" tabindex="-1">' +
  '<div id="divRplyFwdMsg" dir="ltr"><font face="Calibri, sans-serif" style="font-size:11pt" color="#000000">' +
  '<b>From:</b> Acme Support &lt;support@acme.com&gt;<br><b>Sent:</b> Tuesday, March 4, 2025 10:15<br>' +
  '<b>To:</b> Jane Doe &lt;jane@example.com&gt;<br><b>Subject:</b> Re: Order</font><div>&nbsp;</div></div>' +
  '<div class="BodyFragment"><font size="2"><span style="font-size:11pt;"><div class="PlainText">Which order do you mean?</div>' +
  '</span></font></div>';

// divRplyFwdMsg nested in wrappers: the quoted body follows in the PARENT flow.
const OUTLOOK_NESTED_HTML =
  '<div class="wrapper"><div>Answer above.</div><div><div id="divRplyFwdMsg"><b>From:</b> A &lt;a@acme.com&gt;</div>' +
  '<div>quoted in same wrapper</div></div><div>quoted in outer wrapper</div></div><p>quoted after wrapper</p>';

const OUTLOOK_NEW_MOBILE_HTML =
  '<div dir="ltr">Got it, thanks!</div><div dir="ltr"><br></div>' +
  '<div id="ms-outlook-mobile-signature" dir="ltr">Get <a href="https://aka.ms/AAb9ysg">Outlook for iOS</a></div>' +
  '<div id="mail-editor-reference-message-container" class="ms-outlook-mobile-reference-message skipProofing">' +
  '<div style="font-family: Aptos;"><b>From: </b>Acme Support &lt;support@acme.com&gt;<br>' +
  '<b>Sent: </b>Tuesday, March 4, 2025 10:15 AM<br><b>To: </b>Jane &lt;jane@example.com&gt;<br>' +
  '<b>Subject: </b>Re: Access<br></div><br>Can you log in now?</div>';

const OUTLOOK_TEXT = lines(
  'Please cancel my subscription.',
  '',
  'Thanks,',
  'Bob',
  '',
  '-----Original Message-----',
  'From: Acme Support <support@acme.com>',
  'Sent: Tuesday, March 4, 2025 10:15 AM',
  'To: Bob <bob@example.com>',
  'Subject: Your subscription',
  '',
  'Hi Bob, your subscription renews tomorrow.',
);

const OUTLOOK_UNDERSCORE_TEXT = lines(
  'Please cancel.',
  '',
  '________________________________',
  'From: Acme Support <support@acme.com>',
  'Sent: Tuesday, March 4, 2025 10:15',
  'To: Bob <bob@example.com>',
  'Subject: Your subscription',
  '',
  'Hi Bob',
);

const APPLE_HTML =
  '<html><head><meta http-equiv="content-type" content="text/html; charset=utf-8"></head><body dir="auto">' +
  '<div dir="ltr"></div><div dir="ltr">Yes, please refund it.</div><div dir="ltr"><br></div>' +
  '<div dir="ltr">Sent from my iPhone</div><div dir="ltr"><br><blockquote type="cite">' +
  'On Mar 4, 2025, at 10:15, Acme Support &lt;support@acme.com&gt; wrote:<br><br></blockquote></div>' +
  '<blockquote type="cite"><div dir="ltr"><div>Should we refund the order?</div></div></blockquote></body></html>';

const APPLE_TEXT = lines(
  'Yes, please refund it.',
  '',
  'Sent from my iPhone',
  '',
  '> On Mar 4, 2025, at 10:15, Acme Support <support@acme.com> wrote:',
  '> ',
  '> Should we refund the order?',
);

const THUNDERBIRD_HTML =
  '<html><head><meta http-equiv="Content-Type" content="text/html; charset=UTF-8"></head><body>' +
  '<p>I attached the log file.</p><div class="moz-cite-prefix">On 3/4/25 10:15 AM, Acme Support wrote:<br></div>' +
  '<blockquote type="cite" cite="mid:abc@acme.com"><p>Could you send us the log?</p></blockquote>' +
  '<div class="moz-signature">-- <br>Peter Smith</div></body></html>';

const THUNDERBIRD_TEXT = lines(
  'I attached the log file.',
  '',
  'On 3/4/25 10:15 AM, Acme Support wrote:',
  '> Could you send us the log?',
  '',
  '-- ',
  'Peter Smith',
);

const YAHOO_HTML =
  '<html><head></head><body><div class="ydp3b1f yahoo-style-wrap" style="font-family:Helvetica Neue, Helvetica, Arial, sans-serif;font-size:13px;">' +
  '<div dir="ltr" data-setdir="false">The package arrived damaged.</div><div dir="ltr" data-setdir="false"><br></div>' +
  '<div dir="ltr" data-setdir="false">Tom</div></div>' +
  '<div class="ydp1a2 yahoo-signature"><a href="https://mail.onelink.me/107872968?pid=nativeplacement">Sent from Yahoo Mail for iPhone</a></div>' +
  '<div id="ydp5c3yahoo_quoted_1234" class="yahoo_quoted"><div style="font-family:\'Helvetica Neue\', Helvetica, Arial, sans-serif;font-size:13px;color:#26282a;">' +
  '<div>On Tuesday, March 4, 2025 at 10:15:00 AM GMT+1, Acme Support &lt;support@acme.com&gt; wrote:</div>' +
  '<div><br></div><div><br></div><div><div dir="ltr">Did the package arrive?</div></div></div></div></body></html>';

const PROTON_HTML =
  '<div style="font-family: Arial, sans-serif; font-size: 14px;">Works now, thanks.</div>' +
  '<div style="font-family: Arial, sans-serif; font-size: 14px;"><br></div>' +
  '<div class="protonmail_signature_block" style="font-family: Arial, sans-serif; font-size: 14px;">' +
  '<div class="protonmail_signature_block-user protonmail_signature_block-empty"></div>' +
  '<div class="protonmail_signature_block-proton">Sent with <a target="_blank" href="https://proton.me/">Proton Mail</a> secure email.</div></div>' +
  '<div style="font-family: Arial, sans-serif; font-size: 14px;"><br></div>' +
  '<div class="protonmail_quote">On Tuesday, March 4th, 2025 at 10:15 AM, Acme Support &lt;support@acme.com&gt; wrote:<br>' +
  '<blockquote class="protonmail_quote" type="cite">Did that work?</blockquote><br></div>';

const INLINE_TEXT = lines(
  'Hi,',
  '',
  'On Tue, Mar 4, 2025 at 10:15 AM Acme Support <support@acme.com> wrote:',
  '> 1. Which browser do you use?',
  '',
  'Firefox 128 on Windows.',
  '',
  '> 2. Did you clear the cache?',
  '',
  'Yes, twice.',
  '',
  '> Thanks,',
  '> Acme Support',
  '',
  'Jane',
);

// Gmail puts inline answers INSIDE the quote blockquote in the HTML part.
const INLINE_HTML =
  '<div dir="ltr">Hi,</div><br><div class="gmail_quote gmail_quote_container"><div dir="ltr" class="gmail_attr">' +
  'On Tue, Mar 4, 2025 at 10:15 AM Acme Support &lt;support@acme.com&gt; wrote:<br></div>' +
  '<blockquote class="gmail_quote">1. Which browser do you use?</blockquote><div>Firefox 128 on Windows.</div>' +
  '<blockquote class="gmail_quote">2. Did you clear the cache?</blockquote><div>Yes, twice.</div>' +
  '<blockquote class="gmail_quote">Thanks,<br>Acme Support</blockquote><div>Jane</div></div>';

describe('extractReplyText: HTML replies by client', () => {
  runCases([
    { name: 'a Gmail reply keeps only the text above gmail_quote', html: GMAIL_HTML, text: GMAIL_TEXT, expected: GMAIL_EXPECTED },
    { name: 'a Gmail reply is handled from the HTML part alone', html: GMAIL_HTML, expected: GMAIL_EXPECTED },
    { name: 'an older Gmail div.gmail_quote (attribution inside it) is removed', html: GMAIL_OLD_HTML, expected: 'Still broken.' },
    {
      name: 'a Gmail signature block after "-- " is removed',
      html: GMAIL_SIGNATURE_HTML,
      expected: 'Please send the contract again.',
    },
    {
      name: 'Outlook desktop: the border-top "From:" block and everything after it is removed',
      html: OUTLOOK_DESKTOP_HTML,
      expected: 'Hi team,\n\nThe export still fails with error 500.\n\nRegards,\nJane',
    },
    {
      name: 'Outlook desktop in German: the border-top "Von:" block is removed',
      html: OUTLOOK_DESKTOP_GERMAN_HTML,
      expected: 'Hallo,\ndie Rechnung stimmt nicht.',
    },
    {
      name: 'Outlook web: appendonsend, the hr and divRplyFwdMsg with the message after it are removed',
      html: OUTLOOK_WEB_HTML,
      expected: 'Yes, order 4411 is the right one.',
    },
    {
      name: 'Outlook: everything after a nested divRplyFwdMsg in document order is removed',
      html: OUTLOOK_NESTED_HTML,
      expected: 'Answer above.',
    },
    {
      name: 'new Outlook mobile: the reference-message container and the "Get Outlook for iOS" footer go',
      html: OUTLOOK_NEW_MOBILE_HTML,
      expected: 'Got it, thanks!',
    },
    {
      name: 'Apple Mail: blockquote type=cite and the trailing "Sent from my iPhone" are removed',
      html: APPLE_HTML,
      text: APPLE_TEXT,
      expected: 'Yes, please refund it.',
    },
    {
      name: 'Thunderbird: moz-cite-prefix, the cite blockquote and moz-signature are removed',
      html: THUNDERBIRD_HTML,
      expected: 'I attached the log file.',
    },
    {
      name: 'Yahoo: yahoo_quoted and the "Sent from Yahoo Mail for iPhone" footer are removed',
      html: YAHOO_HTML,
      expected: 'The package arrived damaged.\n\nTom',
    },
    {
      name: 'Proton Mail: protonmail_quote and the Proton signature block are removed',
      html: PROTON_HTML,
      expected: 'Works now, thanks.',
    },
    {
      name: 'an "On … wrote:" left in a plain paragraph of an HTML mail still cuts the history',
      html: '<p>See you Friday.</p><p>On Tue, Mar 4, 2025 at 10:15 AM Acme &lt;support@acme.com&gt; wrote:</p><blockquote><p>Shall we meet?</p></blockquote>',
      expected: 'See you Friday.',
    },
    {
      name: 'Outlook classic: an <hr> followed by a From/Sent/To/Subject block cuts the history',
      html:
        '<div>Confirmed, thanks.</div><hr size="2" width="100%" align="center"><font face="Tahoma" size="2">' +
        '<b>From:</b> Acme Support [support@acme.com]<br><b>Sent:</b> Tuesday, March 4, 2025 10:15 AM<br>' +
        '<b>To:</b> Bob<br><b>Subject:</b> Order</font><div>Old body</div>',
      expected: 'Confirmed, thanks.',
    },
    {
      name: 'a customer <hr> followed by a "From:" sentence is not a quote separator',
      html: '<p>Problem report</p><hr><p>From: the dashboard I cannot export.</p><div style="border-top:solid 1px #ccc"><p>From: my phone it works.</p></div>',
      expected: 'Problem report\n\nFrom: the dashboard I cannot export.\n\nFrom: my phone it works.',
    },
    {
      name: 'HTML with "&gt;"-quoted paragraphs drops them',
      html: '<div>My answer.</div><div>&gt; your question</div><div>&gt; more question</div>',
      expected: 'My answer.',
    },
    {
      name: 'a hidden preheader and zero-width characters never reach the reply',
      html:
        '<div style="display:none;max-height:0;overflow:hidden">Preview text \u200B\u200C\u200B</div>' +
        '<div>Hel\u200Blo, I need\u00AD help with\uFEFF my account.</div>',
      expected: 'Hello, I need help with my account.',
    },
  ]);
});

describe('extractReplyText: plain-text replies', () => {
  runCases([
    { name: 'a Gmail text reply keeps only the text above "On … wrote:"', text: GMAIL_TEXT, expected: GMAIL_EXPECTED },
    {
      name: 'an "On … wrote:" wrapped over two lines is recognised',
      text: lines(
        'Thanks!',
        '',
        'On Tue, Mar 4, 2025 at 10:15 AM Acme Support Team via Helpdesk <',
        'support@acme.com> wrote:',
        '',
        '> Hi',
      ),
      expected: 'Thanks!',
    },
    {
      name: 'an "On … wrote:" wrapped before "wrote:" and not followed by ">" still cuts',
      text: lines('Done.', 'On Tue, Mar 4, 2025 at 10:15 AM Acme Support <support@acme.com>', 'wrote:', 'Old text'),
      expected: 'Done.',
    },
    {
      name: 'Outlook -----Original Message----- cuts the history',
      text: OUTLOOK_TEXT,
      expected: 'Please cancel my subscription.\n\nThanks,\nBob',
    },
    {
      name: 'an Outlook From/Sent/To/Subject block after an underscore line is removed with the line',
      text: OUTLOOK_UNDERSCORE_TEXT,
      expected: 'Please cancel.',
    },
    {
      name: 'Apple Mail text: quoted attribution and trailing "Sent from my iPhone" are removed',
      text: APPLE_TEXT,
      expected: 'Yes, please refund it.',
    },
    {
      name: 'Thunderbird text: attribution, ">" lines and the "-- " signature are removed',
      text: THUNDERBIRD_TEXT,
      expected: 'I attached the log file.',
    },
    {
      name: 'Outlook for iOS text: footer, underscore line and header block are removed',
      text: lines(
        'Sure, thanks.',
        '',
        'Get Outlook for iOS<https://aka.ms/o0ukef>',
        '________________________________',
        'From: Acme Support <support@acme.com>',
        'Sent: Tuesday, March 4, 2025 10:15:00 AM',
        'To: Bob <bob@example.com>',
        'Subject: Re: Order',
        '',
        'Which order?',
      ),
      expected: 'Sure, thanks.',
    },
    {
      name: 'Yahoo text: the unquoted history after "On … wrote:" and the footer before it are removed',
      text: lines(
        'The package arrived damaged.',
        '',
        'Tom',
        '',
        'Sent from Yahoo Mail for iPhone',
        '',
        'On Tuesday, March 4, 2025, 10:15 AM, Acme Support <support@acme.com> wrote:',
        '',
        'Did the package arrive?',
      ),
      expected: 'The package arrived damaged.\n\nTom',
    },
    {
      name: 'Windows line endings are handled',
      text: 'Line one\r\nLine two\r\n\r\nOn Tue, Mar 4, 2025 at 10:15 AM Acme <support@acme.com> wrote:\r\n> old\r\n',
      expected: 'Line one\nLine two',
    },
  ]);
});

const NEW = 'Die neue Nachricht.';
const OLD = 'Old quoted text.';

describe('extractReplyText: localised attribution lines', () => {
  const headers: Array<[string, string]> = [
    ['German Gmail', 'Am Di., 4. März 2025 um 10:15 Uhr schrieb Acme Support <support@acme.com>:'],
    ['German Apple Mail', 'Am 04.03.2025 um 10:15 schrieb Acme Support <support@acme.com>:'],
    ['German mobile Gmail', 'Acme Support <support@acme.com> schrieb am Di., 4. März 2025, 10:15:'],
    [
      'French with a non-breaking space before the colon',
      'Le mar. 4 mars 2025 à 10:15, Acme Support <support@acme.com> a\u00A0écrit\u00A0:',
    ],
    ['French with a normal space before the colon', 'Le 4 mars 2025 à 10:15, Acme Support a écrit :'],
    ['Spanish', 'El mar, 4 mar 2025 a las 10:15, Acme Support (<support@acme.com>) escribió:'],
    ['Dutch', 'Op di 4 mrt 2025 om 10:15 schreef Acme Support <support@acme.com>:'],
    ['Dutch Apple Mail', 'Op 4 mrt. 2025 om 10:15 heeft Acme Support <support@acme.com> het volgende geschreven:'],
    ['Italian', 'Il giorno mar 4 mar 2025 alle ore 10:15 Acme Support <support@acme.com> ha scritto:'],
    ['Portuguese', 'Em ter., 4 de mar. de 2025 às 10:15, Acme Support <support@acme.com> escreveu:'],
    ['Swedish', 'Den tis 4 mars 2025 kl 10:15 skrev Acme Support <support@acme.com>:'],
    ['Chinese (Apple Mail)', '在 2025年3月4日 10:15，Acme Support <support@acme.com> 写道：'],
    ['Chinese (Gmail)', 'Acme Support <support@acme.com> 于2025年3月4日周二 10:15写道：'],
    ['Traditional Chinese', 'Acme Support <support@acme.com> 於 2025年3月4日 週二 上午10:15 寫道：'],
    ['Japanese (Apple Mail)', '2025/03/04 10:15、Acme Support <support@acme.com>のメッセージ:'],
    ['Japanese (English wording)', '2025/03/04 10:15、Acme Support <support@acme.com> wrote:'],
    ['Japanese (Gmail)', '2025年3月4日(火) 10:15 Acme Support <support@acme.com>:'],
    ['Russian (Thunderbird)', '04.03.2025 10:15, Acme Support пишет:'],
    ['Russian (Mail.ru)', '4 марта 2025 г., в 10:15, Acme Support <support@acme.com> написал(а):'],
    ['Russian (Gmail)', 'вт, 4 мар. 2025 г. в 10:15, Acme Support <support@acme.com>:'],
    ['Polish', 'W dniu 4.03.2025 o 10:15, Acme Support <support@acme.com> pisze:'],
    ['Finnish', 'pe 4.3.2025 klo 10.15 Acme Support (support@acme.com) kirjoitti:'],
  ];

  it.each(headers)('%s: cuts at the attribution line', (_name, header) => {
    expect(extractReplyText({ text: lines(NEW, '', header, OLD), html: null })).toBe(NEW);
  });

  it.each(headers)('%s: drops the attribution line before ">" quotes', (_name, header) => {
    expect(extractReplyText({ text: lines(NEW, '', header, '', `> ${OLD}`), html: null })).toBe(NEW);
  });
});

describe('extractReplyText: Outlook header blocks and original-message separators', () => {
  const blocks: Array<[string, string[]]> = [
    [
      'English',
      ['From: Acme Support <support@acme.com>', 'Sent: Tuesday, March 4, 2025 10:15 AM', 'To: Bob <bob@example.com>', 'Subject: RE: Order'],
    ],
    [
      'German',
      [
        'Von: Acme Support <support@acme.com>',
        'Gesendet: Dienstag, 4. März 2025 10:15',
        'An: Klaus Müller <klaus@example.de>',
        'Betreff: AW: Rechnung',
      ],
    ],
    [
      'French (nbsp before colons)',
      [
        'De\u00A0: Acme Support <support@acme.com>',
        'Envoyé\u00A0: mardi 4 mars 2025 10:15',
        'À\u00A0: Marie <marie@example.fr>',
        'Objet\u00A0: RE: Commande',
      ],
    ],
    [
      'Spanish',
      [
        'De: Acme Support <support@acme.com>',
        'Enviado: martes, 4 de marzo de 2025 10:15',
        'Para: Ana <ana@example.es>',
        'Asunto: RE: Pedido',
      ],
    ],
    [
      'Dutch',
      [
        'Van: Acme Support <support@acme.com>',
        'Verzonden: dinsdag 4 maart 2025 10:15',
        'Aan: Joost <joost@example.nl>',
        'Onderwerp: RE: Bestelling',
      ],
    ],
    [
      'Chinese',
      ['发件人: Acme Support <support@acme.com>', '发送时间: 2025年3月4日 10:15', '收件人: 王伟 <wang@example.cn>', '主题: 回复: 订单'],
    ],
    [
      'Chinese with full-width colons',
      ['发件人：Acme Support <support@acme.com>', '发送时间：2025年3月4日 10:15', '收件人：王伟', '主题：回复: 订单'],
    ],
    [
      'Outlook without addresses (Exchange names)',
      ['From: Acme Support', 'Sent: Tuesday, March 4, 2025 10:15 AM', 'To: Bob Smith', 'Cc: Billing', 'Subject: RE: Order'],
    ],
    [
      'Gmail-rendered bold keys',
      [
        '*From:* Acme Support <support@acme.com>',
        '*Sent:* Tuesday, March 4, 2025 10:15 AM',
        '*To:* Bob <bob@example.com>',
        '*Subject:* RE: Order',
      ],
    ],
  ];

  it.each(blocks)('%s header block cuts the history', (_name, block) => {
    expect(extractReplyText({ text: lines('My new text.', '', ...block, '', OLD), html: null })).toBe('My new text.');
  });

  const separators = [
    '-----Original Message-----',
    '-----Ursprüngliche Nachricht-----',
    "-----Message d'origine-----",
    '-----Mensaje original-----',
    '------- Original Message -------',
  ];
  it.each(separators)('"%s" cuts the history', (separator) => {
    expect(extractReplyText({ text: lines('My new text.', '', separator, 'From: x', OLD), html: null })).toBe('My new text.');
  });
});

describe('extractReplyText: forwards keep only what the forwarder wrote', () => {
  const gmailForwardHtml = (note: string): string =>
    `<div dir="ltr">${note}<br><br><div class="gmail_quote gmail_quote_container"><div dir="ltr" class="gmail_attr">` +
    '---------- Forwarded message ---------<br>From: <strong class="gmail_sendername" dir="auto">Billing</strong> ' +
    '<span dir="auto">&lt;<a href="mailto:billing@acme.com">billing@acme.com</a>&gt;</span><br>Date: Tue, Mar 4, 2025 at 10:15 AM<br>' +
    'Subject: Payment failed<br>To: &lt;<a href="mailto:jane@example.com">jane@example.com</a>&gt;<br></div><br><br>' +
    '<div>Your payment failed.</div></div></div>';

  runCases([
    {
      name: 'a Gmail HTML forward keeps the note above the forwarded message',
      html: gmailForwardHtml('FYI, see the error below.'),
      expected: 'FYI, see the error below.',
    },
    // Issue 16: a message that is only a forward sends us the forwarded message's text.
    { name: 'a Gmail HTML forward without a note gives the forwarded text', html: gmailForwardHtml(''), expected: 'Your payment failed.' },
    {
      name: 'a Gmail text forward keeps the note',
      text: lines(
        'FYI, see the error below.',
        '',
        '---------- Forwarded message ---------',
        'From: Billing <billing@acme.com>',
        'Date: Tue, Mar 4, 2025 at 10:15 AM',
        'Subject: Payment failed',
        'To: <jane@example.com>',
        '',
        '',
        'Your payment failed.',
      ),
      expected: 'FYI, see the error below.',
    },
    {
      name: 'an Apple Mail forward ("Begin forwarded message:") keeps the note',
      text: lines(
        'Can you check this?',
        '',
        'Sent from my iPad',
        '',
        'Begin forwarded message:',
        '',
        '> From: Billing <billing@acme.com>',
        '> Subject: Payment failed',
      ),
      expected: 'Can you check this?',
    },
    {
      name: 'an Apple Mail HTML forward inside blockquote type=cite keeps the note',
      html: '<div dir="ltr">Can you check this?</div><div dir="ltr"><br><blockquote type="cite">Begin forwarded message:<br><br><b>From:</b> Billing</blockquote></div>',
      expected: 'Can you check this?',
    },
    {
      name: 'a Thunderbird forward ("-------- Forwarded Message --------") keeps the note',
      text: lines(
        'Forwarding as discussed.',
        '',
        '-------- Forwarded Message --------',
        'Subject: \tPayment failed',
        'Date: \tTue, 4 Mar 2025 10:15:00 +0100',
        OLD,
      ),
      expected: 'Forwarding as discussed.',
    },
    {
      name: 'a Thunderbird HTML forward (moz-forward-container) keeps the note',
      html: '<p>Forwarding as discussed.</p><div class="moz-forward-container"><br>-------- Forwarded Message --------<table class="moz-email-headers-table"><tr><th>Subject:</th><td>Payment failed</td></tr></table>Old body</div>',
      expected: 'Forwarding as discussed.',
    },
    {
      name: 'a German forward separator keeps the note',
      text: lines('Bitte prüfen.', '-----Weitergeleitete Nachricht-----', 'Von: Billing <billing@acme.com>', OLD),
      expected: 'Bitte prüfen.',
    },
    {
      name: 'an Outlook forward (divRplyFwdMsg) without a note is empty',
      html: '<div></div><hr><div id="divRplyFwdMsg"><b>From:</b> Billing &lt;billing@acme.com&gt;<br><b>Sent:</b> Tuesday</div><div>Old body</div>',
      expected: '',
    },
  ]);
});

describe('extractReplyText: inline replies', () => {
  runCases([
    {
      name: 'answers interleaved between ">" quotes are kept and the quotes dropped',
      text: INLINE_TEXT,
      expected: 'Hi,\n\nFirefox 128 on Windows.\n\nYes, twice.\n\nJane',
    },
    {
      name: 'an inline reply prefers the text part because the HTML keeps answers inside the quote',
      text: INLINE_TEXT,
      html: INLINE_HTML,
      expected: 'Hi,\n\nFirefox 128 on Windows.\n\nYes, twice.\n\nJane',
    },
    {
      name: 'a bottom-posted reply keeps the text below the quote',
      text: lines('On 3/4/25 10:15 AM, Acme Support wrote:', '> Did it work?', '', 'Yes, it works now.'),
      expected: 'Yes, it works now.',
    },
    {
      name: 'a "wrote:" line without date is only dropped because a ">" block follows it',
      text: lines('Acme Support wrote:', '> Did it work?', '>> older', 'Yes.'),
      expected: 'Yes.',
    },
    {
      // Issue 30: with no attribution or header block around it, a quote is what the sender shows us.
      name: 'a message that is only quotes, with no attribution, is the quoted text',
      text: lines('> quoted', '> more quoted', ''),
      expected: 'quoted\nmore quoted',
    },
    {
      name: 'a message that is only an attribution and its quote is empty',
      text: lines('On Tue, Mar 4, 2025 at 10:15 AM Acme <help@acme.example> wrote:', '> quoted', '> more quoted', ''),
      expected: '',
    },
  ]);
});

describe('extractReplyText: signatures and mobile footers', () => {
  runCases([
    { name: 'a "-- " line removes the signature after it', text: 'Thanks\n-- \nJohn Smith\nACME Ltd', expected: 'Thanks' },
    { name: 'a "--" line without the trailing space also works', text: 'Thanks\n--\nJohn Smith', expected: 'Thanks' },
    { name: 'a message that is only a signature is empty', text: '-- \nJohn Smith', expected: '' },
    {
      name: 'an underscore-only line alone is not a signature',
      text: 'Totals below\n__\nOrder 1: $5',
      expected: 'Totals below\n__\nOrder 1: $5',
    },
  ]);

  const footers = [
    'Sent from my iPhone',
    'Sent from my iPad',
    'Sent from my Android',
    'Sent from my Samsung Galaxy smartphone.',
    'Sent from Outlook for iOS',
    'Get Outlook for Android',
    'Get Outlook for iOS<https://aka.ms/o0ukef>',
    'Sent from Yahoo Mail for iPhone',
    'Sent from Mail for Windows',
    'Von meinem iPhone gesendet',
    'Envoyé de mon iPhone',
    'Enviado desde mi iPhone',
    'Verzonden vanaf mijn iPhone',
  ];

  it.each(footers)('"%s" as the last line is removed', (footer) => {
    expect(extractReplyText({ text: `Please call me back.\n\n${footer}\n`, html: null })).toBe('Please call me back.');
  });

  it.each(footers)('"%s" right before a removed quote is removed', (footer) => {
    const text = lines('Please call me back.', '', footer, '', 'On Tue, Mar 4, 2025 at 10:15 AM Acme <support@acme.com> wrote:', '> Hi');
    expect(extractReplyText({ text, html: null })).toBe('Please call me back.');
  });

  runCases([
    {
      name: 'a footer followed by more new text is kept',
      text: 'Sent from my iPhone\nActually, one more thing: the invoice is wrong.',
      expected: 'Sent from my iPhone\nActually, one more thing: the invoice is wrong.',
    },
    {
      name: 'stacked footers at the end are all removed',
      text: 'Ok.\n\nSent from my iPhone\nGet Outlook for iOS',
      expected: 'Ok.',
    },
    {
      name: 'a sentence starting like a footer is kept',
      text: 'Sent from my work laptop, the export still fails.',
      expected: 'Sent from my work laptop, the export still fails.',
    },
  ]);
});

describe('extractReplyText: legitimate content survives', () => {
  runCases([
    {
      name: 'a sentence starting with "On Monday" survives',
      text: 'On Monday I was charged twice.\nPlease refund one of the charges.',
      expected: 'On Monday I was charged twice.\nPlease refund one of the charges.',
    },
    {
      name: '"On Monday, my colleague wrote:" without a time or address survives',
      text: 'On Monday, my colleague wrote:\nthe invoice total is wrong.',
      expected: 'On Monday, my colleague wrote:\nthe invoice total is wrong.',
    },
    {
      name: 'a sentence ending in "wrote:" with a bare address in prose survives',
      text: 'I contacted jane@example.com and she wrote:\nno refund possible.',
      expected: 'I contacted jane@example.com and she wrote:\nno refund possible.',
    },
    {
      name: 'a "From:" sentence is not an Outlook header',
      text: "From: the dashboard I can't export the CSV.\nTo: be clear, it worked last week.",
      expected: "From: the dashboard I can't export the CSV.\nTo: be clear, it worked last week.",
    },
    {
      name: 'a sentence ending in "<address>:" without a time survives',
      text: 'In 2024 I got this from support <help@acme.com>:\nyour refund is pending.',
      expected: 'In 2024 I got this from support <help@acme.com>:\nyour refund is pending.',
    },
    {
      name: 'a From/To/Date itinerary without subject or address is not an Outlook header',
      text: 'I need to change my booking:\nFrom: Berlin\nTo: Paris\nDate: 4 May 2025\nIs that possible?',
      expected: 'I need to change my booking:\nFrom: Berlin\nTo: Paris\nDate: 4 May 2025\nIs that possible?',
    },
    {
      name: '"-- see below" inside a paragraph is not a signature delimiter',
      text: 'I tried again -- see below\n-- see below for the log\nERROR 500',
      expected: 'I tried again -- see below\n-- see below for the log\nERROR 500',
    },
    {
      name: 'a line starting with ">50" or ">=" is a comparison, not a quote',
      text: '>50 orders failed today.\n>= 3 retries each.',
      expected: '>50 orders failed today.\n>= 3 retries each.',
    },
    {
      name: 'a sentence with "On" and a wrapped header below keeps the sentence',
      text: lines('On Monday I was charged twice', 'On Tue, Mar 4, 2025 at 10:15 AM Acme <support@acme.com> wrote:', '> old'),
      expected: 'On Monday I was charged twice',
    },
    {
      name: 'a plain "Here is what support said:" before quotes is kept',
      text: lines('Here is what support said:', '> Please wait 24 hours.', 'It has been a week.'),
      expected: 'Here is what support said:\nIt has been a week.',
    },
  ]);
});

describe('extractReplyText: output shape and part selection', () => {
  runCases([
    { name: 'both parts null gives an empty string', expected: '' },
    { name: 'whitespace-only input gives an empty string', text: ' \n\t\n', html: '  ', expected: '' },
    {
      name: 'trailing spaces are removed and blank-line runs collapsed',
      text: 'Line one   \n\n\n\n\nLine two\t\n\n\n',
      expected: 'Line one\n\nLine two',
    },
    {
      name: 'an image-only HTML part falls back to the text part',
      html: '<div><img src="cid:scan.png"></div>',
      text: 'See the attached scan.\n\nOn Tue, Mar 4, 2025 at 10:15 AM Acme <support@acme.com> wrote:\n> old',
      expected: 'See the attached scan.',
    },
    {
      name: 'an HTML reply that is entirely quote stays empty even if the text part is not',
      html: '<div class="gmail_quote">On Tue, Mar 4, 2025 at 10:15 AM Acme wrote:<blockquote class="gmail_quote">old</blockquote></div>',
      text: 'unmarked old text the rules cannot see',
      expected: '',
    },
    {
      name: 'the HTML part is preferred over a text part without quote markers',
      html: GMAIL_HTML,
      text: 'Thanks, that fixed it!\n\nHi Jane, please clear your cache.',
      expected: GMAIL_EXPECTED,
    },
  ]);
});

// No timing assertions (performance is measured by benchmarks): these inputs check correctness on
// huge and hostile bodies; a pathological slowdown still fails through vitest's per-test timeout.
describe('extractReplyText: robustness on huge and hostile input', () => {
  it('returns a 1 MB single line with quote-like words intact', () => {
    const line = 'On ' + 'a wrote: '.repeat(110_000);
    const result = extractReplyText({ text: line, html: null });
    expect(result).toHaveLength(line.trim().length);
    expect(result).toBe(line.trim());
  });

  it('cuts a 100,000-line body exactly at the quote attribution', () => {
    const body = Array.from({ length: 100_000 }, (_, i) => `Step ${i} done at 10:15, next:`).join('\n');
    const text = `${body}\n\nOn Tue, Mar 4, 2025 at 10:15 AM Acme <support@acme.com> wrote:\n> old`;
    const result = extractReplyText({ text, html: null });
    expect(result.endsWith('Step 99999 done at 10:15, next:')).toBe(true);
    expect(result).toBe(body);
  });

  it('keeps every answer of 100,000 quoted lines interleaved with answers', () => {
    const text = Array.from({ length: 50_000 }, (_, i) => `> q${i}\na${i}`).join('\n');
    const result = extractReplyText({ text, html: null });
    expect(result).toBe(Array.from({ length: 50_000 }, (_, i) => `a${i}`).join('\n'));
  });

  it('keeps 1 MB of HTML reply text and drops the quote after it', () => {
    const html = `<div>${'word '.repeat(200_000)}</div><div class="gmail_quote">old</div>`;
    const result = extractReplyText({ text: null, html });
    expect(result.endsWith('word')).toBe(true);
    expect(result).not.toContain('old');
    expect(result).toBe('word '.repeat(200_000).trim());
  });

  it('handles 10,000 levels of nesting around the reply and the quote', () => {
    const html =
      '<div>'.repeat(10_000) +
      'Deep reply' +
      '<blockquote type="cite">old</blockquote>' +
      '</div>'.repeat(10_000) +
      '<div id="divRplyFwdMsg">From: x</div>' +
      '<span>'.repeat(10_000) +
      'quoted';
    expect(extractReplyText({ text: null, html })).toBe('Deep reply');
  });

  it('renders the innermost text of 20,000 nested <hr> and border-top divs', () => {
    // An unbounded subtree walk per separator once made this input take ~20 s; the per-test
    // timeout catches a regression to that.
    const html = '<hr><div style="border-top:solid 1px">'.repeat(20_000) + 'x';
    expect(extractReplyText({ text: null, html })).toBe('x');
  });

  it('never throws on malformed or hostile input', () => {
    const inputs: Array<{ text: string | null; html: string | null }> = [
      { text: null, html: '<div id="divRplyFwdMsg"' },
      { text: null, html: '<<<<>>>><hr><hr><div style="border-top:solid">From:' },
      { text: '>'.repeat(100_000), html: null },
      { text: '\u0000\uFFFF\uD800 broken surrogate', html: '<p>\uD800</p>' },
      { text: 'On '.repeat(50_000) + 'wrote:', html: null },
    ];
    for (const input of inputs) {
      expect(() => extractReplyText(input)).not.toThrow();
    }
    expect(extractReplyText({ text: null, html: '<div id="divRplyFwdMsg"' })).toBe('');
    expect(extractReplyText({ text: '\u0000\uFFFF\uD800 broken surrogate', html: null })).toBe('\u0000\uFFFF\uD800 broken surrogate');
  });
});

// ---------------------------------------------------------------------------------------------
// The recognisers behind the plain-text rules (issue 16). The corpus test
// (test/unit/new-text-corpus.test.ts) measures them on whole messages; these pin single lines.
// ---------------------------------------------------------------------------------------------

describe('attributionStrength: how sure a line is a client attribution', () => {
  const strong = [
    'On Tue, Mar 4, 2025 at 10:15 AM Acme <support@acme.example> wrote:',
    'On 04/03/2025 09:58, Pinegrove Support wrote:',
    'Am 04.03.25 um 10:15 schrieb Ferngrund Elektronik:',
    'Dne 04.03.2025 v 10:15 Vltava Hosting napsal(a):',
    '-----"Granite Support" <support@granite.example> wrote: -----',
    '---- On Tue, 04 Mar 2025 10:15:00 +0100 Acme <ops@acme.example> wrote ----',
    '2025-03-04 10:15 GMT+02:00 Atlas Parcel <noreply@atlas.example>:',
    '04.03.2025, 10:15, "Берёзка" <support@berezka.example>:',
    'Вторник, 4 марта 2025, 10:15 +03:00 от Берёзка <support@berezka.example>:',
    'Name <a@acme.example> ezt írta (időpont: 2025. márc. 4., K, 10:15):',
    'Name <a@acme.example>, 4 Mar 2025 Sal, 10:15 tarihinde şunu yazdı:',
    '2025年 3月 4日 (화) 오전 10:15, 한빛몰 <help@hanbit.example>님이 작성:',
    '玉山 <service@yushan.example> 於 2025年3月4日 上午10:15 寫道：',
  ];
  it.each(strong)('strong: %s', (line) => {
    expect(attributionStrength(line)).toBe('strong');
  });

  const weak = [
    'Acme Support wrote:',
    'Your colleague Mira wrote:',
    'On 4 March 2025 at 10:15 your driver wrote:',
    'At 10:40 our admin wrote:',
    'Atlas Parcel <support@atlas.example>:',
    '* Aster Support <support@aster.example> [2025-03-04 10:15 +0000]:',
  ];
  it.each(weak)('weak (cuts only before quoted text): %s', (line) => {
    expect(attributionStrength(line)).toBe('weak');
  });

  const none = [
    'On Monday I was charged twice.',
    'Please see what I wrote below',
    'The error message says:',
    'I contacted them on 4 March 2025 at 10:15 and asked:',
    'wrote',
    `On ${'x'.repeat(500)} <a@b.example> wrote:`,
  ];
  it.each(none)('not an attribution: %s', (line) => {
    expect(attributionStrength(line)).toBeNull();
  });
});

describe('splitSameLineAttribution: text on the same line as an attribution', () => {
  it.each([
    ['Sounds good. On Wed, Mar 5, 2025 at 3:59 PM, Atlas <a@atlas.example> wrote:', 'Sounds good.'],
    ['Thanks! Works now. On Mar 5, 2025, at 15:59, Atlas <a@atlas.example> wrote:', 'Thanks! Works now.'],
    ['Ça marche. Le mar. 4 mars 2025 à 10:15, Atlas <a@atlas.example> a écrit :', 'Ça marche.'],
    ['Det passer fint. tir. 4. mar. 2025 kl. 10:15 skrev Fjordlys <k@fjordlys.example>:', 'Det passer fint.'],
    ['收到，謝謝。玉山 <service@yushan.example> 於 2025年3月4日 上午10:15 寫道：', '收到，謝謝。'],
  ])('%s', (line, before) => {
    expect(splitSameLineAttribution(line)).toEqual({ before });
  });

  it.each([
    'Le mar. 4 mars 2025 à 10:15, Atlas <a@atlas.example> a écrit :',
    'ti 4. maalisk. 2025 klo 10.15 Revontuli (asiakaspalvelu@revontuli.example) kirjoitti:',
    'tir. 4. mar. 2025 kl. 10:15 skrev Fjordlys <k@fjordlys.example>:',
    'I asked twice. Your colleague wrote:',
    'Fine. On Monday your driver wrote:',
  ])('no split: %s', (line) => {
    expect(splitSameLineAttribution(line)).toBeNull();
  });
});

describe('headerBlockAt and separatorKind', () => {
  it.each([
    [
      'GMX (date first)',
      ['Gesendet: Dienstag, 04. März 2025 um 10:15 Uhr', 'Von: "Lindwurm" <s@lindwurm.example>', 'An: h@gmx.example', 'Betreff: Re: Login'],
    ],
    [
      'Lotus Notes (tabs, To first)',
      ['To:\tHendrik Vaal/Ops/Brackwater@Brackwater', 'From:\tGranite <s@granite.example>', 'Date:\t04.03.2025 10:15', 'Subject:\tWindow'],
    ],
    [
      'Outlook with blank lines between fields',
      ['From: Orders <o@acme.example>', '', 'Sent: Tuesday, March 4, 2025 10:15 AM', '', 'To: Omar', '', 'Subject: Order'],
    ],
    [
      'QQ Mail',
      [
        '发件人: "云杉"<kefu@yunshan.example>;',
        '发送时间: 2025年3月4日(星期二) 上午10:15',
        '收件人: "王伟"<w@qinghe.example>;',
        '主题: 确认',
      ],
    ],
    [
      'Hungarian Outlook',
      ['Feladó: Balaton <r@balaton.example>', 'Elküldve: 2025. március 4., kedd 10:15', 'Címzett: Kovács Péter', 'Tárgy: Rendelés'],
    ],
  ])('%s is a header block', (_name, block) => {
    expect(headerBlockAt(block, 0)).not.toBeNull();
  });

  it.each([
    ['an itinerary without subject or address', ['From: Berlin', 'To: Paris', 'Date: 4 May 2025']],
    ['two fields only', ['From: Acme <a@acme.example>', 'Subject: hello']],
    ['no From field', ['To: all nodes <n@x.example>', 'Date: 4 March', 'Subject: failed']],
  ])('%s is not a header block', (_name, block) => {
    expect(headerBlockAt(block, 0)).toBeNull();
  });

  it.each([
    ['-----Original Message-----', 'original'],
    ['-----Özgün İleti-----', 'original'],
    ['------------------ 原始邮件 ------------------', 'original'],
    ['---------- Původní e-mail ----------', 'original'],
    ['---------- Forwarded message ---------', 'forward'],
    ['Begin forwarded message:', 'forward'],
    ['Anfang der weitergeleiteten Nachricht:', 'forward'],
    ['-------- Конец пересылаемого сообщения --------', 'forward-end'],
  ])('"%s" is a %s separator', (line, kind) => {
    expect(separatorKind(line)).toBe(kind);
  });

  it.each(['--- see below ---', 'Begin forwarded message', 'Original message attached, see PDF', '-----'])(
    '"%s" is not a separator',
    (line) => {
      expect(separatorKind(line)).toBeNull();
    },
  );

  it('recognises forward subjects in several languages', () => {
    for (const subject of [
      'Fwd: Invoice',
      'FW: Invoice',
      'WG: Rechnung',
      'TR : Facture',
      'RV: Factura',
      'ENC: Fatura',
      '转发: 发票',
      'İLT: Fatura',
    ]) {
      expect(isForwardSubject(subject)).toBe(true);
    }
    expect(isForwardSubject('Re: Invoice')).toBe(false);
    expect(isForwardSubject('Fwding question')).toBe(false);
  });
});

describe('footers: app and device sign-offs, list footers, dash signatures', () => {
  it.each([
    'Sent from my iPhone',
    'Sent from my BlackBerry® wireless device',
    'Sent from Mail<https://go.microsoft.com/fwlink/?LinkId=550986> for Windows',
    'Gesendet von Outlook für Android',
    'Gesendet mit der WEB.DE Mail App',
    'Sendt fra min iPad',
    'Skickat från min iPhone',
    'Verstuurd vanaf mijn iPhone',
    'Enviado desde mi Huawei',
    'Envoyé de mon appareil Galaxy',
    'Inviato da iPhone',
    'Enviado do meu smartphone Galaxy.',
    'Lähetetty iPhonesta',
    "Wysłane z iPhone'a",
    'Odesláno z iPhonu',
    'iPhone-ról küldve',
    "iPhone'umdan gönderildi",
    'Στάλθηκε από το iPhone μου',
    'Отправлено из мобильной Почты Mail.ru',
    'Надіслано з iPhone',
    'iPhoneから送信',
    '发自我的iPhone',
    '從我的 iPhone 傳送',
    'iPhone에서 보냄',
    'Gửi từ iPhone của tôi',
    'Dikirim dari iPhone saya',
    'נשלח מה-iPhone שלי',
    'أُرسلت من الـ iPhone',
    'मेरे iPhone से भेजा गया',
    'ส่งจาก iPhone ของฉัน',
    'Télécharger Outlook pour Android',
    "Android için Outlook'u edinin",
  ])('"%s" is a footer', (line) => {
    expect(isMobileFooter(line)).toBe(true);
  });

  it.each([
    'Sent from my work laptop, the export still fails.',
    'Get me a refund for the iPhone case please',
    'Von meinem Konto wurde zweimal abgebucht.',
    'Sent from the warehouse yesterday, still not here',
    'Download the invoice from the portal',
  ])('"%s" is not a footer', (line) => {
    expect(isMobileFooter(line)).toBe(false);
  });

  it('finds Mailman, Mailman 3 and Google Groups footers', () => {
    expect(isListFooterStart(['_______________________________________________', 'users mailing list'], 0)).toBe(true);
    expect(isListFooterStart(['_______________________________________________', 'dev mailing list -- dev@lists.example'], 0)).toBe(true);
    expect(isListFooterStart(['You received this message because you are subscribed to the Google Groups "x" group.'], 0)).toBe(true);
    expect(isListFooterStart(['_______________________________________________', 'Totals below'], 0)).toBe(false);
  });

  it('finds a one-line dash signature but not the last item of a dash list', () => {
    expect(dashSignatureStart(['Ship it to the office.', '', '-Raj'])).toBe(2);
    expect(dashSignatureStart(['Thanks.', '', '— Eleanor Whitfield', 'Head of Ops', '+44 20 7946 0321'])).toBe(2);
    expect(dashSignatureStart(['I need:', '- Apples', '- Pears'])).toBe(-1);
    expect(dashSignatureStart(['I need:', '', '- Apples', '- Pears'])).toBe(-1);
    expect(dashSignatureStart(['-- see below for the log', 'ERROR 500'])).toBe(-1);
  });
});

describe('extractReplyText: forwards, quote-only messages and false attributions', () => {
  runCases([
    {
      name: "a forward-only message returns the forwarded text, without the forwarded message's own quotes",
      text: lines(
        '---------- Forwarded message ---------',
        'From: Dana <dana@farm.example>',
        'Date: Mon, Mar 3, 2025 at 6:40 PM',
        'Subject: Re: Delivery',
        'To: <orders@acme.example>',
        '',
        'Half the sacks are wet.',
        '',
        'On Mon, Mar 3, 2025 at 9:00 AM Acme <orders@acme.example> wrote:',
        '> Your pallet arrives today.',
      ),
      expected: 'Half the sacks are wet.',
    },
    {
      name: 'a reply that is only quote (Outlook, subject without a forward prefix) stays empty',
      text: lines(
        '',
        '-----Original Message-----',
        'From: Acme <a@acme.example>',
        'Sent: Tuesday, March 4, 2025 10:15 AM',
        'To: Jane',
        'Subject: RE: Order',
        '',
        'Anything else?',
      ),
      expected: '',
    },
    {
      name: "a weak attribution followed by the customer's own text is kept",
      text: lines('Your colleague Mira wrote:', '"we will refund you within 5 days"', 'It has been three weeks.'),
      expected: 'Your colleague Mira wrote:\n"we will refund you within 5 days"\nIt has been three weeks.',
    },
    {
      name: 'a weak attribution left alone at the end (its HTML quote was removed) goes',
      html: '<p>Works now.</p><p>On 2025-03-05 14:20, Voltgrid Support wrote:</p><blockquote type="cite"><p>Try again.</p></blockquote>',
      expected: 'Works now.',
    },
  ]);
});

describe('new-text recognisers stay linear on hostile input', () => {
  it('handles 20,000 colon-ended lines full of sentence ends and addresses', () => {
    const text = Array.from({ length: 20_000 }, (_, i) => `Ok. Fine. Sure. On Tue. At 10:15. Name <a${i}@b.example> note:`).join('\n');
    const result = extractReplyText({ text, html: null });
    expect(result.split('\n')).toHaveLength(20_000);
  });

  it('removes 100,000 trailing footer lines', () => {
    const text = `Keep me.\n${'Sent from my iPhone\n'.repeat(100_000)}`;
    expect(extractReplyText({ text, html: null })).toBe('Keep me.');
  });

  it('handles a Gmail quote container with 50,000 alternating passages and answers', () => {
    const parts = Array.from({ length: 25_000 }, (_, i) => `<blockquote class="gmail_quote">q${i}</blockquote><div>a${i}</div>`).join('');
    const html = `<div>Top</div><div class="gmail_quote">${parts}</div>`;
    const result = extractReplyText({ text: null, html });
    expect(result.startsWith('Top')).toBe(true);
    expect(result).not.toContain('q1');
  });
});
