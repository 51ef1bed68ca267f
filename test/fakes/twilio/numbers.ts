import { API_VERSION, friendlyName, newSid, rfc2822, twilioError } from './support.ts';
import type { FakeNumber } from './types.ts';

// Phone numbers: the account's IncomingPhoneNumbers (buy, list, update, release) and the pool
// AvailablePhoneNumbers/{Country}/Local offers. A released number goes back to the pool.

export interface RestAnswer {
  status: number;
  body?: unknown;
}

interface IncomingNumber {
  sid: string;
  phoneNumber: string;
  friendlyName: string;
  voiceUrl: string | null;
  voiceMethod: string;
  voiceFallbackUrl: string | null;
  voiceFallbackMethod: string;
  statusCallback: string | null;
  statusCallbackMethod: string;
  smsUrl: string | null;
  smsMethod: string;
  dateCreated: Date;
  dateUpdated: Date;
}

/** The settings POST IncomingPhoneNumbers(.json | /{Sid}.json) may change, by Twilio parameter name. */
const SETTABLE: Array<[string, keyof IncomingNumber]> = [
  ['FriendlyName', 'friendlyName'],
  ['VoiceUrl', 'voiceUrl'],
  ['VoiceMethod', 'voiceMethod'],
  ['VoiceFallbackUrl', 'voiceFallbackUrl'],
  ['VoiceFallbackMethod', 'voiceFallbackMethod'],
  ['StatusCallback', 'statusCallback'],
  ['StatusCallbackMethod', 'statusCallbackMethod'],
  ['SmsUrl', 'smsUrl'],
  ['SmsMethod', 'smsMethod'],
];

const COUNTRY_PREFIXES: Record<string, string> = { US: '+1', CA: '+1', GB: '+44', FR: '+33', DE: '+49', AU: '+61' };
const DEFAULT_PAGE_SIZE = 50;
const KEYPAD: Record<string, string> = { ABC: '2', DEF: '3', GHI: '4', JKL: '5', MNO: '6', PQRS: '7', TUV: '8', WXYZ: '9' };

export function defaultAvailableNumbers(): string[] {
  return Array.from({ length: 20 }, (_, index) => `+1415555${String(100 + index).padStart(4, '0')}`);
}

/** Twilio's number patterns: digits, '*' for any one digit, letters as on a keypad. */
function matchesPattern(phoneNumber: string, pattern: string): boolean {
  const digits = [...pattern.toUpperCase()]
    .map((char) => Object.entries(KEYPAD).find(([letters]) => letters.includes(char))?.[1] ?? char)
    .join('')
    .replace(/[^\d*+]/g, '');
  if (digits === '') return true;
  const regex = new RegExp(digits.replace(/\+/g, '\\+').replace(/\*/g, '\\d'));
  return regex.test(phoneNumber);
}

export class NumberInventory {
  private available: string[];
  private readonly owned = new Map<string, IncomingNumber>();

  constructor(
    private readonly accountSid: string,
    available: string[],
    owned: string[],
  ) {
    for (const phoneNumber of owned) this.add(phoneNumber);
    this.available = available.filter((phoneNumber) => !this.findByPhoneNumber(phoneNumber));
  }

  findByPhoneNumber(phoneNumber: string): IncomingNumber | undefined {
    return [...this.owned.values()].find((number) => number.phoneNumber === phoneNumber);
  }

  summaries(): FakeNumber[] {
    return [...this.owned.values()].map(({ sid, phoneNumber, voiceUrl, statusCallback }) => ({ sid, phoneNumber, voiceUrl, statusCallback }));
  }

  /** GET AvailablePhoneNumbers/{Country}/Local.json?AreaCode=&Contains=&PageSize= */
  searchLocal(country: string, query: URLSearchParams): RestAnswer {
    const prefix = COUNTRY_PREFIXES[country];
    const areaCode = query.get('AreaCode');
    const pageSize = Math.min(Number(query.get('PageSize') ?? DEFAULT_PAGE_SIZE) || DEFAULT_PAGE_SIZE, 1000);
    const found = this.available
      .filter((phoneNumber) => prefix !== undefined && phoneNumber.startsWith(prefix))
      .filter((phoneNumber) => !areaCode || phoneNumber.startsWith(`${prefix}${areaCode}`))
      .filter((phoneNumber) => matchesPattern(phoneNumber, query.get('Contains') ?? ''))
      .slice(0, pageSize);
    return {
      status: 200,
      body: {
        uri: `/${API_VERSION}/Accounts/${this.accountSid}/AvailablePhoneNumbers/${country}/Local.json`,
        available_phone_numbers: found.map((phoneNumber) => ({
          friendly_name: friendlyName(phoneNumber),
          phone_number: phoneNumber,
          lata: null,
          locality: null,
          rate_center: null,
          latitude: null,
          longitude: null,
          region: null,
          postal_code: null,
          iso_country: country,
          address_requirements: 'none',
          beta: false,
          capabilities: { voice: true, SMS: true, MMS: true },
        })),
      },
    };
  }

  /** POST IncomingPhoneNumbers.json: buys PhoneNumber (or the first available number in AreaCode). */
  buy(params: URLSearchParams): RestAnswer {
    const wanted = params.get('PhoneNumber') ?? this.available.find((phoneNumber) => phoneNumber.startsWith(`+1${params.get('AreaCode') ?? '-'}`));
    if (!wanted || !this.available.includes(wanted)) {
      return { status: 400, body: twilioError(400, 21422, wanted ? `PhoneNumber ${wanted} is not available.` : 'PhoneNumber is not available.') };
    }
    this.available = this.available.filter((phoneNumber) => phoneNumber !== wanted);
    const number = this.add(wanted);
    this.apply(number, params);
    return { status: 201, body: this.json(number) };
  }

  list(query: URLSearchParams): RestAnswer {
    const pattern = query.get('PhoneNumber') ?? '';
    const named = query.get('FriendlyName');
    const pageSize = Math.min(Number(query.get('PageSize') ?? DEFAULT_PAGE_SIZE) || DEFAULT_PAGE_SIZE, 1000);
    const found = [...this.owned.values()]
      .filter((number) => matchesPattern(number.phoneNumber, pattern))
      .filter((number) => !named || number.friendlyName === named)
      .slice(0, pageSize);
    const uri = `/${API_VERSION}/Accounts/${this.accountSid}/IncomingPhoneNumbers.json`;
    return {
      status: 200,
      body: {
        incoming_phone_numbers: found.map((number) => this.json(number)),
        first_page_uri: `${uri}?PageSize=${pageSize}&Page=0`,
        next_page_uri: null,
        previous_page_uri: null,
        page: 0,
        page_size: pageSize,
        start: 0,
        end: Math.max(0, found.length - 1),
        uri: `${uri}?PageSize=${pageSize}&Page=0`,
      },
    };
  }

  fetch(sid: string): RestAnswer | undefined {
    const number = this.owned.get(sid);
    return number && { status: 200, body: this.json(number) };
  }

  update(sid: string, params: URLSearchParams): RestAnswer | undefined {
    const number = this.owned.get(sid);
    if (!number) return undefined;
    this.apply(number, params);
    return { status: 200, body: this.json(number) };
  }

  release(sid: string): RestAnswer | undefined {
    const number = this.owned.get(sid);
    if (!number) return undefined;
    this.owned.delete(sid);
    this.available.push(number.phoneNumber);
    return { status: 204 };
  }

  /** The number's voice settings, for an inbound call. */
  voiceSettings(phoneNumber: string) {
    const number = this.findByPhoneNumber(phoneNumber);
    return number && { sid: number.sid, voiceUrl: number.voiceUrl, voiceMethod: number.voiceMethod, statusCallback: number.statusCallback, statusCallbackMethod: number.statusCallbackMethod };
  }

  private add(phoneNumber: string): IncomingNumber {
    const now = new Date();
    const number: IncomingNumber = {
      sid: newSid('PN'),
      phoneNumber,
      friendlyName: friendlyName(phoneNumber),
      voiceUrl: null,
      voiceMethod: 'POST',
      voiceFallbackUrl: null,
      voiceFallbackMethod: 'POST',
      statusCallback: null,
      statusCallbackMethod: 'POST',
      smsUrl: null,
      smsMethod: 'POST',
      dateCreated: now,
      dateUpdated: now,
    };
    this.owned.set(number.sid, number);
    return number;
  }

  private apply(number: IncomingNumber, params: URLSearchParams): void {
    const settings = number as unknown as Record<string, unknown>;
    for (const [param, field] of SETTABLE) {
      const value = params.get(param);
      // An empty value clears a URL, as on Twilio.
      if (value !== null) settings[field] = value === '' && field !== 'friendlyName' ? null : value;
    }
    number.dateUpdated = new Date();
  }

  private json(number: IncomingNumber): Record<string, unknown> {
    return {
      sid: number.sid,
      account_sid: this.accountSid,
      friendly_name: number.friendlyName,
      phone_number: number.phoneNumber,
      voice_url: number.voiceUrl,
      voice_method: number.voiceMethod,
      voice_fallback_url: number.voiceFallbackUrl,
      voice_fallback_method: number.voiceFallbackMethod,
      voice_caller_id_lookup: false,
      voice_application_sid: null,
      voice_receive_mode: 'voice',
      status_callback: number.statusCallback,
      status_callback_method: number.statusCallbackMethod,
      sms_url: number.smsUrl,
      sms_method: number.smsMethod,
      sms_fallback_url: null,
      sms_fallback_method: 'POST',
      sms_application_sid: null,
      date_created: rfc2822(number.dateCreated),
      date_updated: rfc2822(number.dateUpdated),
      capabilities: { voice: true, sms: true, mms: true, fax: false },
      status: 'in-use',
      origin: 'twilio',
      address_requirements: 'none',
      beta: false,
      api_version: API_VERSION,
      trunk_sid: null,
      emergency_status: 'Inactive',
      emergency_address_sid: null,
      identity_sid: null,
      address_sid: null,
      bundle_sid: null,
      type: 'local',
      uri: `/${API_VERSION}/Accounts/${this.accountSid}/IncomingPhoneNumbers/${number.sid}.json`,
    };
  }
}
