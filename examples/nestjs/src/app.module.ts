import { Body, Controller, Get, Module, Post } from '@nestjs/common'
import { Deliveries } from './deliveries'

/** The app's own routes: Nest's JSON parser keeps working beside the webhook middleware. */
@Controller()
export class AppController {
  constructor(private readonly deliveries: Deliveries) {}

  @Get('deliveries')
  list() {
    return this.deliveries.all()
  }

  @Post('notes')
  note(@Body() body: { text: string }) {
    return { note: body }
  }
}

@Module({ controllers: [AppController], providers: [Deliveries] })
export class AppModule {}
