/**
 * Banks the service can send to and validate accounts at. `code` is the CBN bank code that clients
 * send as `bank_code` (3 digits for deposit money banks, the 6-digit institution code for
 * microfinance banks, payment service banks and wallets); `nip_code` is the NIBSS Instant Payment
 * institution code. `nuban: false` marks institutions whose account numbers are not NUBANs
 * (for example phone-number based wallet accounts), so the check digit is not verified for them.
 */
export type BankCategory =
  | 'commercial'
  | 'merchant'
  | 'non_interest'
  | 'microfinance'
  | 'payment_service'
  | 'mobile_money';

export interface BankRecord {
  readonly code: string;
  readonly nip_code: string;
  readonly name: string;
  readonly category: BankCategory;
  readonly nuban: boolean;
}

export const BANKS: readonly BankRecord[] = [
  {
    code: '120001',
    nip_code: '120001',
    name: '9 Payment Service Bank',
    category: 'payment_service',
    nuban: false,
  },
  { code: '090270', nip_code: '090270', name: 'AB Microfinance Bank', category: 'microfinance', nuban: true },
  { code: '044', nip_code: '000014', name: 'Access Bank', category: 'commercial', nuban: true },
  {
    code: '090134',
    nip_code: '090134',
    name: 'Accion Microfinance Bank',
    category: 'microfinance',
    nuban: true,
  },
  {
    code: '120004',
    nip_code: '120004',
    name: 'Airtel Smartcash PSB',
    category: 'payment_service',
    nuban: false,
  },
  { code: '100026', nip_code: '100026', name: 'Carbon', category: 'microfinance', nuban: true },
  { code: '023', nip_code: '000009', name: 'Citibank Nigeria', category: 'commercial', nuban: true },
  { code: '559', nip_code: '060001', name: 'Coronation Merchant Bank', category: 'merchant', nuban: true },
  { code: '050', nip_code: '000010', name: 'Ecobank Nigeria', category: 'commercial', nuban: true },
  {
    code: '090551',
    nip_code: '090551',
    name: 'FairMoney Microfinance Bank',
    category: 'microfinance',
    nuban: true,
  },
  { code: '060002', nip_code: '060002', name: 'FBNQuest Merchant Bank', category: 'merchant', nuban: true },
  { code: '070', nip_code: '000007', name: 'Fidelity Bank', category: 'commercial', nuban: true },
  {
    code: '090400',
    nip_code: '090400',
    name: 'Finca Microfinance Bank',
    category: 'microfinance',
    nuban: true,
  },
  { code: '011', nip_code: '000016', name: 'First Bank of Nigeria', category: 'commercial', nuban: true },
  { code: '214', nip_code: '000003', name: 'First City Monument Bank', category: 'commercial', nuban: true },
  { code: '501', nip_code: '400001', name: 'FSDH Merchant Bank', category: 'merchant', nuban: true },
  { code: '103', nip_code: '000027', name: 'Globus Bank', category: 'commercial', nuban: true },
  { code: '562', nip_code: '060004', name: 'Greenwich Merchant Bank', category: 'merchant', nuban: true },
  { code: '058', nip_code: '000013', name: 'Guaranty Trust Bank', category: 'commercial', nuban: true },
  { code: '120002', nip_code: '120002', name: 'HopePSB', category: 'payment_service', nuban: false },
  { code: '301', nip_code: '000006', name: 'Jaiz Bank', category: 'non_interest', nuban: true },
  { code: '082', nip_code: '000002', name: 'Keystone Bank', category: 'commercial', nuban: true },
  {
    code: '090267',
    nip_code: '090267',
    name: 'Kuda Microfinance Bank',
    category: 'microfinance',
    nuban: true,
  },
  {
    code: '090177',
    nip_code: '090177',
    name: 'LAPO Microfinance Bank',
    category: 'microfinance',
    nuban: true,
  },
  {
    code: '090420',
    nip_code: '090420',
    name: 'Letshego Microfinance Bank',
    category: 'microfinance',
    nuban: true,
  },
  { code: '303', nip_code: '000029', name: 'Lotus Bank', category: 'non_interest', nuban: true },
  {
    code: '090281',
    nip_code: '090281',
    name: 'Mint Finex Microfinance Bank',
    category: 'microfinance',
    nuban: true,
  },
  {
    code: '090455',
    nip_code: '090455',
    name: 'Mkobo Microfinance Bank',
    category: 'microfinance',
    nuban: true,
  },
  { code: '120005', nip_code: '120005', name: 'MoneyMaster PSB', category: 'payment_service', nuban: false },
  {
    code: '090405',
    nip_code: '090405',
    name: 'Moniepoint Microfinance Bank',
    category: 'microfinance',
    nuban: true,
  },
  { code: '120003', nip_code: '120003', name: 'MTN MoMo PSB', category: 'payment_service', nuban: false },
  { code: '561', nip_code: '060003', name: 'Nova Bank', category: 'commercial', nuban: true },
  { code: '100004', nip_code: '100004', name: 'OPay', category: 'mobile_money', nuban: false },
  { code: '107', nip_code: '000036', name: 'Optimus Bank', category: 'commercial', nuban: true },
  { code: '100002', nip_code: '100002', name: 'Paga', category: 'mobile_money', nuban: false },
  { code: '100033', nip_code: '100033', name: 'PalmPay', category: 'mobile_money', nuban: false },
  { code: '104', nip_code: '000030', name: 'Parallex Bank', category: 'commercial', nuban: true },
  // Paystack's own NIP institution, not Titan Trust Bank (102): named as Paystack names it to payers
  // (its dedicated and Pay with Transfer accounts' bank, "Paystack-Titan"; "Titan Paystack" in its
  // /bank list, code 100039). Its account numbers are not checked as NUBANs of 100039: Paystack
  // publishes none that could confirm the check digit.
  { code: '100039', nip_code: '100039', name: 'Paystack-Titan', category: 'payment_service', nuban: false },
  { code: '076', nip_code: '000008', name: 'Polaris Bank', category: 'commercial', nuban: true },
  { code: '105', nip_code: '000031', name: 'PremiumTrust Bank', category: 'commercial', nuban: true },
  { code: '101', nip_code: '000023', name: 'Providus Bank', category: 'commercial', nuban: true },
  { code: '502', nip_code: '000024', name: 'Rand Merchant Bank', category: 'merchant', nuban: true },
  {
    code: '090198',
    nip_code: '090198',
    name: 'Renmoney Microfinance Bank',
    category: 'microfinance',
    nuban: true,
  },
  {
    code: '090449',
    nip_code: '090449',
    name: 'Rex Microfinance Bank',
    category: 'microfinance',
    nuban: true,
  },
  {
    code: '090175',
    nip_code: '090175',
    name: 'Rubies Microfinance Bank',
    category: 'microfinance',
    nuban: true,
  },
  {
    code: '090286',
    nip_code: '090286',
    name: 'Safe Haven Microfinance Bank',
    category: 'microfinance',
    nuban: true,
  },
  { code: '106', nip_code: '000034', name: 'Signature Bank', category: 'commercial', nuban: true },
  {
    code: '090325',
    nip_code: '090325',
    name: 'Sparkle Microfinance Bank',
    category: 'microfinance',
    nuban: true,
  },
  { code: '221', nip_code: '000012', name: 'Stanbic IBTC Bank', category: 'commercial', nuban: true },
  { code: '068', nip_code: '000021', name: 'Standard Chartered Bank', category: 'commercial', nuban: true },
  { code: '232', nip_code: '000001', name: 'Sterling Bank', category: 'commercial', nuban: true },
  { code: '100', nip_code: '000022', name: 'SunTrust Bank', category: 'commercial', nuban: true },
  { code: '302', nip_code: '000026', name: 'TAJBank', category: 'non_interest', nuban: true },
  { code: '304', nip_code: '000037', name: 'The Alternative Bank', category: 'non_interest', nuban: true },
  { code: '102', nip_code: '000025', name: 'Titan Trust Bank', category: 'commercial', nuban: true },
  { code: '032', nip_code: '000018', name: 'Union Bank of Nigeria', category: 'commercial', nuban: true },
  { code: '033', nip_code: '000004', name: 'United Bank for Africa', category: 'commercial', nuban: true },
  { code: '215', nip_code: '000011', name: 'Unity Bank', category: 'commercial', nuban: true },
  {
    code: '090110',
    nip_code: '090110',
    name: 'VFD Microfinance Bank',
    category: 'microfinance',
    nuban: true,
  },
  { code: '035', nip_code: '000017', name: 'Wema Bank', category: 'commercial', nuban: true },
  { code: '057', nip_code: '000015', name: 'Zenith Bank', category: 'commercial', nuban: true },
];
